// A multi-core mask for a single-core platform (RK3566) does not compile.
// expect: needs more NPU cores than the platform has
#include <rknnxx/core/platform.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr CoreMaskFor<Platform::rk3566> mask = CoreMask::core_0_1;
#else
constexpr CoreMaskFor<Platform::rk3588> mask = CoreMask::core_0_1;
#endif
static_assert(mask.value() == CoreMask::core_0_1);
