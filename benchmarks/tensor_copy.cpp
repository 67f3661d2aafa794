// rknnxx::copy (tensor/convert.hpp) against memcpy of the same bytes, on the conversions an
// application makes around a board's zero-copy buffers:
//   layout only    dense NHWC -> NHWC with a w_stride (the demos' row copy), NC1HWC2 -> NCHW
//                  (unblocking a native output), NCHW -> NHWC (a framework's tensor into an input);
//   with values    NC1HWC2 int8 -> NCHW float32 (dequantize a native output), NHWC uint8 -> NCHW
//                  float32 (an image into a float tensor).
//
//   tensor_copy
//
// Prints, per case, the best of 30 runs of copy() and of one memcpy of max(source, destination)
// bytes, and memcpy's time / copy's time: 1.00 means copy() moves the tensor at memcpy's speed.
#include <rknnxx/tensor/convert.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using namespace rknnxx;

template <class F> double best_microseconds(F&& f) {
  double best = 1e300;
  for (int run = 0; run < 30; ++run) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

template <class S, class SL, class D, class DL>
void report(const char* name, const TensorView<S, SL>& source, const TensorView<D, DL>& destination) {
  const std::size_t bytes = std::max(source.span_size() * sizeof(S), destination.span_size() * sizeof(D));
  std::vector<std::byte> from(bytes, std::byte{1}), to(bytes);
  const double memcpy_us = best_microseconds([&] {
    std::memcpy(to.data(), from.data(), bytes);
    volatile std::byte observed = to[bytes / 2];  // the copy is used: no compiler may drop it
    (void)observed;
  });
  const double copy_us = best_microseconds([&] { copy(source, destination); });
  fmt::print("{:<44} {:>9} bytes  memcpy {:>7.0f} us  copy {:>7.0f} us  speed {:.2f}x memcpy\n", name, bytes, memcpy_us,
             copy_us, memcpy_us / copy_us);
}

}  // namespace

int main() {
  // A 640x640 RGB image into an input whose rows are padded to 656 pixels (not a multiple of 16).
  const Extents4 image{.n = 1, .c = 3, .h = 640, .w = 640};
  std::vector<std::uint8_t> rgb(image.elements(), 7), padded(std::size_t{640} * 656 * 3);
  report("NHWC uint8 -> NHWC w_stride 656 (layout)", nhwc_view(rgb.data(), image),
         nhwc_view(padded.data(), image, 656));

  // A native int8 output of 32 channels at 80x80, C2 = 16 (RK3588), into NCHW.
  const Extents4 feature{.n = 1, .c = 32, .h = 80, .w = 80};
  std::vector<std::int8_t> native(feature.elements()), nchw(feature.elements());
  const auto native_view = nc1hwc2_view(native.data(), feature, 16);
  report("NC1HWC2 int8 -> NCHW int8 (layout)", native_view, nchw_view(nchw.data(), feature));

  // The same for a feature map larger than the caches (6.5 MB): memcpy runs at memory speed too.
  const Extents4 large{.n = 1, .c = 256, .h = 160, .w = 160};
  std::vector<std::int8_t> large_native(large.elements()), large_nchw(large.elements());
  report("NC1HWC2 int8 -> NCHW int8, 6.5 MB (layout)", nc1hwc2_view(large_native.data(), large, 16),
         nchw_view(large_nchw.data(), large));
  // 64 float channels (a framework's feature map) into NHWC.
  const Extents4 features{.n = 1, .c = 64, .h = 56, .w = 56};
  std::vector<float> planar64(features.elements(), 0.5f), interleaved64(features.elements());
  report("NCHW float32 -> NHWC float32, C = 64 (layout)", nchw_view(planar64.data(), features),
         nhwc_view(interleaved64.data(), features));

  // A framework's float tensor into an NHWC input.
  const Extents4 tensor{.n = 1, .c = 3, .h = 224, .w = 224};
  std::vector<float> planar(tensor.elements(), 0.5f), interleaved(tensor.elements());
  report("NCHW float32 -> NHWC float32 (layout)", nchw_view(planar.data(), tensor),
         nhwc_view(interleaved.data(), tensor));

  // Dequantizing that native output, and an image into a float tensor.
  std::vector<float> dequantized(feature.elements());
  const TensorView<std::int8_t, layout::NC1HWC2> quantized(native.data(), native_view.mapping(),
                                                           Quantization::affine_asymmetric(0.05f, -3));
  report("NC1HWC2 int8 -> NCHW float32 (dequantize)", quantized, nchw_view(dequantized.data(), feature));
  std::vector<float> image_float(image.elements());
  report("NHWC uint8 -> NCHW float32 (values)", nhwc_view(rgb.data(), image), nchw_view(image_float.data(), image));
}
