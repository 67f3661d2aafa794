// A zero extent is refused.
// expect: every extent must be at least 1
#include <rknnxx/core/dims.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr Dims d{1, 0, 224, 224};
#else
constexpr Dims d{1, 3, 224, 224};
#endif
static_assert(d.rank() == 4);
