// RK3576 has two NPU cores: asking for the third does not compile.
// expect: needs more NPU cores than the platform has
#include <rknnxx/core/platform.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr CoreMaskFor<Platform::rk3576> mask = CoreMask::core_0_1_2;
#else
constexpr CoreMaskFor<Platform::rk3588> mask = CoreMask::core_0_1_2;
#endif
static_assert(mask.value() == CoreMask::core_0_1_2);
