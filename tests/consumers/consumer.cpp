// A downstream application: it only includes the umbrella header. The lines below are the
// README's example, so the README cannot drift from what compiles.
#include <rknnxx/rknn.hpp>

#include <cstdio>

using namespace rknnxx;

// Buffer geometry at compile time: RK3568 int8, 255 channels, NC1HWC2 blocking.
constexpr auto g = geometry<Platform::rk3568, std::int8_t, layout::NC1HWC2>({1, 255, 80, 80});
static_assert(g.dims == Dims{1, 32, 80, 80, 8});  // C2 = 8 on RK356x
static_assert(g.size_with_stride == 1 * 32 * 80 * 80 * 8);

// Dynamic shapes (docs/c-interface.md): the group with the largest sum of input sizes is MaxShape.
constexpr ShapeSet seed{{{Dims{1, 224}, Dims{1, 40}}, {Dims{1, 112}, Dims{1, 80}}}};
static_assert(seed.max_shape_index() == 0);

int main() {
  std::printf("rknnxx %s\n", version_string);
  return 0;
}
