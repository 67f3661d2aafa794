// Rank 17 exceeds RKNN_MAX_DIMS.
// expect: exceeds RKNN_MAX_DIMS
#include <rknnxx/core/dims.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr Dims d{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
#else
constexpr Dims d{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
#endif
static_assert(d.elements() == 1);
