// A C2 that is not the platform's (RK3568 int8 uses 8) is refused.
// expect: is not \{\}'s C2
#include <rknnxx/core/geometry.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr std::uint32_t c2 = 16;
#else
constexpr std::uint32_t c2 = 8;
#endif
constexpr auto g = geometry(Platform::rk3568, TensorType::int8, TensorFormat::nc1hwc2, {1, 255, 80, 80}, {.c2 = c2});
static_assert(g.dims[4] == 8);
