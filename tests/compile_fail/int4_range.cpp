// int4 holds -8..7: 8 does not fit, and conversion is exact, never wrapped.
// expect: outside \[-8, 7\]
#include <rknnxx/core/int4.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr Int4 v{8};
#else
constexpr Int4 v{7};
#endif
static_assert(v.value() >= 7);
