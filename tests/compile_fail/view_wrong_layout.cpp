// The layout is part of a view's type: code written for NHWC images does not accept an NCHW view
// of the same bytes (it would read channels as columns).
// expect: (could not convert|no known conversion from)[^\n]*layout::NCHW>' to 'TensorView<[^\n]*layout::NHWC>
#include <rknnxx/tensor/view.hpp>

#include <cstdint>
using namespace rknnxx;
constexpr std::uint8_t first_pixel(TensorView<const std::uint8_t, layout::NHWC> image) { return image(0, 0, 0, 0); }
constexpr std::uint8_t pixels[2 * 2 * 3] = {7};
#ifdef RKNNXX_COMPILE_FAIL
constexpr auto view = nchw_view(pixels, {1, 3, 2, 2});
#else
constexpr auto view = nhwc_view(pixels, {1, 3, 2, 2});
#endif
static_assert(first_pixel(view) == 7);
