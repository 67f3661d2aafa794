// A tensor whose size overflows the ABI's 32-bit size fields is refused at compile time.
// expect: overflows the 32-bit field
#include <rknnxx/core/geometry.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr std::uint32_t batches = 1024;
#else
constexpr std::uint32_t batches = 1023;
#endif
constexpr auto g = geometry<Platform::rk3588, float, layout::NCHW>({batches, 1024, 1024, 1});
static_assert(g.n_elems == batches * 1024 * 1024);
