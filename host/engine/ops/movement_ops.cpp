// Operators that move elements without computing on them: Transpose, Concat, Split, Slice,
// Gather, GatherElements, Pad (constant, reflect, edge, wrap; axes), Tile, DepthToSpace, SpaceToDepth,
// Trilu, Where; and Equal, which compares them. The copies
// work on element bytes, so each is written once for every element type.

#include "../blocked_layout.hpp"
#include "../four_lanes.hpp"
#include "../broadcast.hpp"
#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <type_traits>

namespace rknnxx::host {
namespace {

constexpr int64_t copy_grain = int64_t{1} << 14;

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) {
    strides[i - 1] = strides[i] * shape[i];
  }
  return strides;
}

// dst (contiguous, shape `shape`) [i0, i1, ...] = src[base + sum(i_k * src_strides[k])].
// Covers Transpose (permuted strides) and Slice (start offset, stepped and negative strides).
struct StridedCopy {
  std::vector<int64_t> shape;
  std::vector<int64_t> src_strides;  // in elements, may be negative
  int64_t base = 0;

  template <class U> void run(ThreadPool& pool, const U* src, U* dst) const {
    const int64_t total = element_count(shape);
    if (total == 0) {
      return;
    }
    if (shape.empty()) {
      dst[0] = src[base];
      return;
    }
    const std::size_t rank = shape.size();
    const int64_t row = shape.back();
    const int64_t inner_stride = src_strides.back();
    const int64_t rows = total / row;
    pool.parallel_for(rows, std::max<int64_t>(1, copy_grain / row), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> index(rank, 0);  // of the row, last entry unused
      int64_t rest = begin;
      int64_t offset = base;
      for (std::size_t k = rank - 1; k-- > 0;) {
        index[k] = rest % shape[k];
        rest /= shape[k];
        offset += index[k] * src_strides[k];
      }
      for (int64_t r = begin; r < end; ++r) {
        U* out = dst + r * row;
        if (inner_stride == 1) {
          std::memcpy(out, src + offset, static_cast<std::size_t>(row) * sizeof(U));
        } else {
          for (int64_t j = 0; j < row; ++j) {
            out[j] = src[offset + j * inner_stride];
          }
        }
        for (std::size_t k = rank - 1; k-- > 0;) {  // next row: odometer step
          offset += src_strides[k];
          if (++index[k] < shape[k]) {
            break;
          }
          offset -= index[k] * src_strides[k];
          index[k] = 0;
        }
      }
    });
  }
};

Kernel strided_copy_kernel(DataType dtype, StridedCopy copy) {
  return [dtype, copy = std::move(copy)](KernelContext& k) {
    visit_element_width(dtype, [&]<class U>() {
      copy.run(k.pool, reinterpret_cast<const U*>(k.input(0).raw()), reinterpret_cast<U*>(k.output(0).raw()));
    });
  };
}

// ---- Transpose ----

PreparedOp prepare_transpose(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  const TensorInfo in = ctx.input(0);
  const auto rank = in.shape.size();
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), int64_t{0});
  if (ctx.attribute("perm") != nullptr) {
    perm = ctx.attr_ints("perm");
    std::vector<bool> seen(rank, false);
    if (perm.size() != rank) {
      ctx.fail("perm {} has {} entries for an input of rank {}", shape_string(perm), perm.size(), rank);
    }
    for (int64_t& p : perm) {
      p = ctx.normalize_axis(p, static_cast<int64_t>(rank));
      if (seen[static_cast<std::size_t>(p)]) {
        ctx.fail("perm {} is not a permutation", shape_string(ctx.attr_ints("perm")));
      }
      seen[static_cast<std::size_t>(p)] = true;
    }
  }
  const auto in_strides = strides_of(in.shape);
  StridedCopy copy;
  for (int64_t p : perm) {
    copy.shape.push_back(in.shape[static_cast<std::size_t>(p)]);
    copy.src_strides.push_back(in_strides[static_cast<std::size_t>(p)]);
  }
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, copy.shape}};
  op.kernel = strided_copy_kernel(in.dtype, std::move(copy));
  return op;
}

// ---- Concat ----

// Concat's output in contiguous pieces on the pool, each filled from the inputs that hold it and then finished
// (KernelContext::finish_output: a quantized model's Concat rounds to its own grid) while in cache, instead of a
// copy and then the session's pass over the whole output.
//
// The output is `outer` blocks (the dimensions before the axis), each the inputs' blocks one after the other. A
// float32 Concat of images along channels may have inputs kept in NHWC by blocked_layout.hpp, each read in its
// layout; the output is NHWC when every input is (a piece is then whole pixels), else NCHW.
struct ConcatCopy {
  int64_t outer = 0;
  std::vector<int64_t> blocks;  // per input: its elements in each block of the output
  std::vector<int64_t> starts;  // per input: where its part of a block starts
  int64_t block = 0;            // the output's elements per block
  std::size_t size = 0;         // bytes per element
  // Images along channels, float32: which inputs are NHWC, and whether the output is.
  std::vector<char> kept_input;
  bool kept_output = false;
  int64_t plane = 0, out_channels = 0;

  // One pixel's channels: a few dozen floats, where a memcpy call per pixel cost more than the copy (densenet's
  // Concats of up to 49 inputs of 32 channels).
  static void copy_pixel(float* to, const float* from, int64_t count) {
    int64_t c = 0;
    for (; c + 4 <= count; c += 4) store4(to + c, load4(from + c));
    for (; c < count; ++c) to[c] = from[c];
  }

  void operator()(KernelContext& k) const {
    // In pieces of whole pixels when the output is NHWC.
    const int64_t unit = kept_output ? out_channels : 1, units = outer * block / unit;
    const int64_t piece = std::max<int64_t>(1, finish_piece / unit);
    k.pool.parallel_for(units, piece, [&](int64_t begin, int64_t end) {
      for (int64_t first = begin; first < end; first += piece) {
        const int64_t last = std::min(end, first + piece);
        if (kept_output) {
          fill_pixels(k, first, last);
        } else {
          fill(k, first, last);
        }
        if (k.finish_output) {
          k.finish_output(k.output(0).data<float>() + first * unit, static_cast<std::size_t>((last - first) * unit));
        }
      }
    });
  }

  // Output elements [begin, end) in the output's order (NCHW for images), input by input.
  void fill(const KernelContext& k, int64_t begin, int64_t end) const {
    std::byte* out = k.output(0).raw();
    int64_t o = begin / block, at = begin % block;  // the block, and the place in it
    std::size_t i = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin()) - 1;
    for (int64_t e = begin; e < end;) {
      while (at >= starts[i] + blocks[i]) ++i;  // past empty inputs too
      const int64_t from = at - starts[i], count = std::min(end - e, blocks[i] - from);
      if (!kept_input.empty() && kept_input[i] != 0) {
        // NCHW from NHWC: channel c of pixel p is element p * channels + c of the input's image.
        const int64_t channels = blocks[i] / plane;
        const float* image = k.input(i).data<float>() + o * blocks[i];
        float* to = reinterpret_cast<float*>(out) + e;
        int64_t c = from / plane, p = from - c * plane;
        for (int64_t j = 0; j < count; ++j) {
          to[j] = image[p * channels + c];
          if (++p == plane) {
            p = 0;
            ++c;
          }
        }
      } else {
        std::memcpy(out + static_cast<std::size_t>(e) * size,
                    k.input(i).raw() + static_cast<std::size_t>(o * blocks[i] + from) * size,
                    static_cast<std::size_t>(count) * size);
      }
      e += count;
      at += count;
      if (at == block) {
        at = 0;
        i = 0;
        ++o;
      }
    }
  }

  // NHWC from NHWC: output pixels [begin, end) of all images, each pixel's channels from each input in turn.
  void fill_pixels(const KernelContext& k, int64_t begin, int64_t end) const {
    float* y = k.output(0).data<float>();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const float* x = k.input(i).data<float>();
      const int64_t channels = blocks[i] / plane, first = starts[i] / plane;
      for (int64_t p = begin; p < end; ++p) copy_pixel(y + p * out_channels + first, x + p * channels, channels);
    }
  }
};

PreparedOp prepare_concat(OpContext& ctx) {
  ctx.expect_inputs(1, 1 << 20);
  const TensorInfo first = ctx.input(0);
  const auto rank = static_cast<int64_t>(first.shape.size());
  if (rank == 0) {
    ctx.fail("cannot concatenate scalars");
  }
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), rank));
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  auto copy = std::make_shared<ConcatCopy>();
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    const TensorInfo& in = ctx.input(i);
    if (in.dtype != first.dtype) {
      ctx.fail("input {} has element type {}, input 0 has {}", i, dtype_name(in.dtype), dtype_name(first.dtype));
    }
    bool compatible = in.shape.size() == first.shape.size();
    for (std::size_t d = 0; compatible && d < in.shape.size(); ++d) {
      compatible = d == axis || in.shape[d] == first.shape[d];
    }
    if (!compatible) {
      ctx.fail("input {} has shape {}, which does not match {} of input 0 outside axis {}", i, shape_string(in.shape),
               shape_string(first.shape), axis);
    }
    shape[axis] += in.shape[axis];
    copy->starts.push_back(copy->block);
    copy->blocks.push_back(element_count(std::span(in.shape).subspan(axis)));
    copy->block += copy->blocks.back();
  }
  copy->outer = element_count(std::span(first.shape).first(axis));
  copy->size = element_size(first.dtype);
  PreparedOp op;
  op.outputs = {TensorInfo{first.dtype, shape}};
  if (copy->block == 0 || copy->outer == 0) {
    op.kernel = [](KernelContext&) {};
    return op;
  }
  if (first.dtype == DataType::float32 && rank == 4 && axis == 1 && shape[2] * shape[3] != 0) {
    copy->kept_input.assign(ctx.input_count(), 0);
    copy->plane = shape[2] * shape[3];
    copy->out_channels = shape[1];
    op.blocked = nhwc_following_ports(  // every input in NHWC, and the output when all of them are
        op.outputs[0].bytes(), every_input, [copy](std::size_t i) { copy->kept_input[i] = 1; },
        [copy] { copy->kept_output = true; });
  }
  op.finishes_output = first.dtype == DataType::float32;
  op.kernel = [copy](KernelContext& k) { (*copy)(k); };
  return op;
}

// ---- Split ----

PreparedOp prepare_split(OpContext& ctx) {
  ctx.expect_inputs(1, ctx.opset() >= 13 ? 2 : 1);
  const TensorInfo in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), rank));
  const int64_t length = in.shape[axis];
  const auto outputs = static_cast<int64_t>(ctx.output_count());
  std::vector<int64_t> split;
  const bool has_num_outputs = ctx.opset() >= 18 && ctx.attribute("num_outputs") != nullptr;
  if (ctx.opset() >= 13 && ctx.has_input(1)) {
    if (has_num_outputs) {
      ctx.fail("give the split input or attribute 'num_outputs', not both");
    }
    split = constant_ints(ctx, 1, "split");
  } else if (ctx.opset() < 13 && ctx.attribute("split") != nullptr) {
    split = ctx.attr_ints("split");
  } else if (has_num_outputs) {
    // Split-18: chunks of ceil(length / num_outputs), the last one smaller when it does not divide.
    const int64_t n = ctx.attr_int("num_outputs", 0);
    if (n < 1 || n != outputs) {
      ctx.fail("attribute 'num_outputs' is {}, the node has {} outputs", n, outputs);
    }
    const int64_t chunk = length / n + (length % n != 0 ? 1 : 0);
    const int64_t last = length - chunk * (n - 1);  // no overflow: chunk * (n - 1) < length + n
    if (last < 0) {
      ctx.fail("axis {} of size {} cannot be split into {} chunks of {}", axis, length, n, chunk);
    }
    split.assign(static_cast<std::size_t>(n), chunk);
    split.back() = last;
  } else {
    if (outputs == 0 || length % outputs != 0) {
      ctx.fail("axis {} of size {} cannot be split equally into {} outputs", axis, length, outputs);
    }
    split.assign(static_cast<std::size_t>(outputs), length / outputs);
  }
  if (static_cast<int64_t>(split.size()) != outputs) {
    ctx.fail("split {} has {} entries for {} outputs", shape_string(split), split.size(), outputs);
  }
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0) {
      ctx.fail("split {} has a negative size", shape_string(split));
    }
    if (s > length - sum) {  // the sizes may be anything: compared without adding past the axis
      ctx.fail("split {} adds up to more than the size {} of axis {}", shape_string(split), length, axis);
    }
    sum += s;
  }
  if (sum != length) {
    ctx.fail("split {} adds up to {}, axis {} has size {}", shape_string(split), sum, axis, length);
  }
  PreparedOp op;
  for (int64_t s : split) {
    auto shape = in.shape;
    shape[axis] = s;
    op.outputs.push_back(TensorInfo{in.dtype, std::move(shape)});
  }
  const int64_t outer = element_count(std::span(in.shape).first(axis));
  const int64_t inner = element_count(std::span(in.shape).subspan(axis + 1));
  op.kernel = [outer, inner, length, split, size = element_size(in.dtype)](KernelContext& k) {
    const std::byte* src = k.input(0).raw();
    const auto row = static_cast<std::size_t>(length * inner) * size;
    std::size_t start = 0;
    for (std::size_t i = 0; i < split.size(); ++i) {
      const auto n = static_cast<std::size_t>(split[i] * inner) * size;
      if (k.outputs[i] != nullptr && n != 0) {
        std::byte* dst = k.output(i).raw();
        for (int64_t o = 0; o < outer; ++o) {
          std::memcpy(dst + static_cast<std::size_t>(o) * n, src + static_cast<std::size_t>(o) * row + start, n);
        }
      }
      start += n;
    }
  };
  return op;
}

// ---- Slice ----

PreparedOp prepare_slice(OpContext& ctx) {
  const TensorInfo in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    ctx.expect_inputs(1, 1);
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    axes = ctx.attr_ints("axes");
  } else {
    ctx.expect_inputs(3, 5);
    starts = constant_ints(ctx, 1, "starts");
    ends = constant_ints(ctx, 2, "ends");
    if (ctx.has_input(3)) {
      axes = constant_ints(ctx, 3, "axes");
    }
    if (ctx.has_input(4)) {
      steps = constant_ints(ctx, 4, "steps");
    }
  }
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), int64_t{0});
  }
  if (steps.empty()) {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    ctx.fail("starts, ends, axes and steps have {}, {}, {} and {} entries; they must agree", starts.size(), ends.size(),
             axes.size(), steps.size());
  }
  const auto in_strides = strides_of(in.shape);
  StridedCopy copy;
  copy.shape = in.shape;
  copy.src_strides = in_strides;
  std::vector<bool> seen(static_cast<std::size_t>(rank), false);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto axis = static_cast<std::size_t>(ctx.normalize_axis(axes[i], rank));
    if (seen[axis]) {
      ctx.fail("axis {} is sliced twice", axis);
    }
    seen[axis] = true;
    const int64_t dim = in.shape[axis];
    const int64_t step = steps[i];
    if (step == 0) {
      ctx.fail("step 0 on axis {}", axis);
    }
    // Negative positions count from the end; then clamp as the ONNX reference does
    // (starts/ends may be INT64_MIN/MAX sentinels; adding dim to INT64_MIN cannot overflow).
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      start = std::min(std::max<int64_t>(start, 0), dim);
      end = std::min(std::max<int64_t>(end, 0), dim);
    } else {
      start = std::min(std::max<int64_t>(start, 0), dim - 1);
      end = std::min(std::max<int64_t>(end, -1), dim - 1);
    }
    int64_t count = 0;
    if (step > 0 && end > start) {
      count = 1 + (end - start - 1) / step;  // written so that a huge step cannot overflow
    } else if (step < 0 && start > end) {
      count = 1 + (end - start + 1) / step;
    }
    copy.shape[axis] = count;
    copy.src_strides[axis] = count > 1 ? in_strides[axis] * step : 0;
    if (count > 0) {
      copy.base += start * in_strides[axis];
    }
  }
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, copy.shape}};
  op.kernel = strided_copy_kernel(in.dtype, std::move(copy));
  return op;
}

// ---- Gather ----

PreparedOp prepare_gather(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(1, {DataType::int64, DataType::int32});
  const TensorInfo data = ctx.input(0);
  const TensorInfo indices = ctx.input(1);
  const auto rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) {
    ctx.fail("cannot gather from a scalar");
  }
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), rank));
  std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + static_cast<std::ptrdiff_t>(axis));
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, data.shape.end());
  const int64_t outer = element_count(std::span(data.shape).first(axis));
  const int64_t dim = data.shape[axis];
  const int64_t inner = element_count(std::span(data.shape).subspan(axis + 1));
  const int64_t count = indices.elements();
  PreparedOp op;
  op.outputs = {TensorInfo{data.dtype, shape}};
  op.kernel = [=, size = element_size(data.dtype), label = ctx.node().label()](KernelContext& k) {
    const Tensor& idx = k.input(1);
    std::vector<int64_t> index(static_cast<std::size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = idx.dtype() == DataType::int64 ? idx.data<int64_t>()[i] : idx.data<int32_t>()[i];
      if (v < -dim || v >= dim) {
        throw EngineError(fmt::format("{}: index {} is out of range for axis {} of size {}", label, v, axis, dim));
      }
      index[static_cast<std::size_t>(i)] = v < 0 ? v + dim : v;
    }
    const std::byte* src = k.input(0).raw();
    std::byte* dst = k.output(0).raw();
    const auto block = static_cast<std::size_t>(inner) * size;
    if (block == 0) {
      return;
    }
    k.pool.parallel_for(
        outer * count, std::max<int64_t>(1, copy_grain / std::max<int64_t>(inner, 1)), [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t o = r / count;
            const int64_t i = r - o * count;
            std::memcpy(dst + static_cast<std::size_t>(r) * block,
                        src + static_cast<std::size_t>(o * dim + index[static_cast<std::size_t>(i)]) * block, block);
          }
        });
  };
  return op;
}

// ---- Pad ----

enum class PadMode { constant, reflect, edge, wrap };

PreparedOp prepare_pad(OpContext& ctx) {
  const TensorInfo in = ctx.input(0);
  const auto rank = in.shape.size();
  std::vector<int64_t> pads;
  float attr_value = 0.0f;
  if (ctx.opset() < 11) {
    ctx.expect_inputs(1, 1);
    pads = ctx.attr_ints("pads");
    attr_value = ctx.attr_float("value", 0.0f);
  } else {
    ctx.expect_inputs(2, ctx.opset() >= 18 ? 4 : 3);
    pads = constant_ints(ctx, 1, "pads");
  }
  if (ctx.opset() >= 18 && ctx.has_input(3)) {
    // Pad-18: pads for the listed axes only, [begins..., ends...]; other axes are not padded.
    const std::vector<int64_t> axes = constant_ints(ctx, 3, "axes");
    if (pads.size() != 2 * axes.size()) {
      ctx.fail("pads {} has {} entries, expected {} for the {} axes {}", shape_string(pads), pads.size(),
               2 * axes.size(), axes.size(), shape_string(axes));
    }
    std::vector<int64_t> full(2 * rank, 0);
    std::vector<bool> seen(rank, false);
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const auto a = static_cast<std::size_t>(ctx.normalize_axis(axes[i], static_cast<int64_t>(rank)));
      if (seen[a]) {
        ctx.fail("axes {} names axis {} twice", shape_string(axes), a);
      }
      seen[a] = true;
      full[a] = pads[i];
      full[a + rank] = pads[i + axes.size()];
    }
    pads = std::move(full);
  }
  if (pads.size() != 2 * rank) {
    ctx.fail("pads {} has {} entries, expected {} for an input of rank {}", shape_string(pads), pads.size(), 2 * rank,
             rank);
  }
  const std::string mode_name = ctx.attr_string("mode", "constant");
  PadMode mode = PadMode::constant;
  if (mode_name == "reflect") {
    mode = PadMode::reflect;
  } else if (mode_name == "edge") {
    mode = PadMode::edge;
  } else if (mode_name == "wrap" && ctx.opset() >= 19) {
    mode = PadMode::wrap;
  } else if (mode_name != "constant") {
    ctx.fail("mode '{}' is not supported at opset {} (constant, reflect or edge; wrap from opset 19 on)", mode_name,
             ctx.opset());
  }
  // Per axis and output position: the input position it copies, or -1 for the constant.
  std::vector<std::vector<int64_t>> source(rank);
  std::vector<int64_t> shape(rank);
  for (std::size_t a = 0; a < rank; ++a) {
    const int64_t dim = in.shape[a];
    const int64_t before = pads[a];
    shape[a] = checked_add(checked_add(dim, before, "the padded size"), pads[a + rank], "the padded size");
    if (shape[a] < 0) {
      ctx.fail("pads {} remove more than the {} elements of axis {}", shape_string(pads), dim, a);
    }
    if (mode != PadMode::constant &&
        (dim == 0 ||
         (mode == PadMode::wrap && dim + std::min<int64_t>(before, 0) + std::min<int64_t>(pads[a + rank], 0) <= 0)) &&
        shape[a] > 0) {
      ctx.fail("{} padding of the empty axis {}", mode_name, a);
    }
  }
  // The tables are built only for an output the engine can hold, and not at all for an empty one
  // (whose other axes may still be long).
  (void)byte_count(in.dtype, shape);
  const bool empty = element_count(shape) == 0;
  for (std::size_t a = 0; a < rank && !empty; ++a) {
    const int64_t dim = in.shape[a];
    const int64_t before = pads[a];
    for (int64_t o = 0; o < shape[a]; ++o) {
      int64_t i = o - before;
      if (i < 0 || i >= dim) {
        if (mode == PadMode::constant) {
          i = -1;
        } else if (mode == PadMode::edge) {
          i = std::clamp<int64_t>(i, 0, dim - 1);
        } else if (mode == PadMode::wrap) {
          // As ONNX's reference: negative pads crop first, and the rest wraps around what is left.
          const int64_t first = std::max<int64_t>(0, -before);
          const int64_t kept = dim - first - std::max<int64_t>(0, -pads[a + rank]);
          const int64_t j = o - std::max<int64_t>(0, before);
          i = first + ((j % kept) + kept) % kept;
        } else if (dim == 1) {
          i = 0;
        } else {
          const int64_t period = 2 * (dim - 1);  // reflect without repeating the edge, any distance
          i = ((i % period) + period) % period;
          if (i >= dim) {
            i = period - i;
          }
        }
      }
      source[a].push_back(i);
    }
  }
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, shape}};
  op.kernel = [source, shape, attr_value, dtype = in.dtype, strides = strides_of(in.shape)](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      T fill{};
      if (const Tensor* value = k.optional_input(2); value != nullptr && value->elements() > 0) {
        fill = value->data<T>()[0];
      } else if constexpr (is_float_bits_v<T>) {
        fill = narrow<T>(attr_value);
      } else if constexpr (std::is_same_v<T, bool>) {
        fill = attr_value != 0.0f;
      } else {
        fill = static_cast<T>(attr_value);
      }
      const T* src = k.input(0).data<T>();
      T* dst = k.output(0).data<T>();
      const std::size_t rank = shape.size();
      const int64_t total = element_count(shape);
      if (total == 0) {
        return;
      }
      if (rank == 0) {
        dst[0] = src[0];
        return;
      }
      const int64_t row = shape.back();
      const auto& last = source.back();
      k.pool.parallel_for(total / row, std::max<int64_t>(1, copy_grain / row), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          T* out = dst + r * row;
          int64_t rest = r;
          int64_t offset = 0;
          bool constant = false;
          for (std::size_t a = rank - 1; a-- > 0;) {
            const int64_t o = rest % shape[a];
            rest /= shape[a];
            const int64_t i = source[a][static_cast<std::size_t>(o)];
            constant = constant || i < 0;
            offset += i * strides[a];
          }
          if (constant) {
            std::fill(out, out + row, fill);
            continue;
          }
          for (int64_t j = 0; j < row; ++j) {
            const int64_t i = last[static_cast<std::size_t>(j)];
            out[j] = i < 0 ? fill : src[offset + i];
          }
        }
      });
    });
  };
  return op;
}

// ---- Where and Equal ----

Broadcast broadcast_inputs(const OpContext& ctx, std::size_t count) {
  std::vector<std::vector<int64_t>> shapes;
  for (std::size_t i = 0; i < count; ++i) {
    shapes.push_back(ctx.input(i).shape);
  }
  std::string error;
  broadcast_shape(shapes, error);
  if (!error.empty()) {
    std::vector<std::string> given;
    for (const auto& s : shapes) {
      given.push_back(shape_string(s));
    }
    ctx.fail("input shapes {} do not broadcast: {}", fmt::join(given, ", "), error);
  }
  return Broadcast(shapes);
}

PreparedOp prepare_where(OpContext& ctx) {
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(0, {DataType::boolean});
  const DataType dtype = ctx.input(1).dtype;
  if (ctx.input(2).dtype != dtype) {
    ctx.fail("inputs 1 and 2 have element types {} and {}; they must agree", dtype_name(dtype),
             dtype_name(ctx.input(2).dtype));
  }
  Broadcast bc = broadcast_inputs(ctx, 3);
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, bc.shape()}};
  op.kernel = [bc = std::move(bc), dtype](KernelContext& k) {
    visit_element_width(dtype, [&]<class U>() {
      const bool* c = k.input(0).data<bool>();
      const U* x = reinterpret_cast<const U*>(k.input(1).raw());
      const U* y = reinterpret_cast<const U*>(k.input(2).raw());
      U* out = reinterpret_cast<U*>(k.output(0).raw());
      bc.parallel_runs(
          k.pool, [&](int64_t o, std::span<const int64_t> offsets, std::span<const int64_t> steps, int64_t n) {
            for (int64_t i = 0; i < n; ++i) {
              out[o + i] = c[offsets[0] + i * steps[0]] ? x[offsets[1] + i * steps[1]] : y[offsets[2] + i * steps[2]];
            }
          });
    });
  };
  return op;
}

template <class T> auto comparable(T v) {
  if constexpr (is_float_bits_v<T>) {
    return widen(v);
  } else {
    return v;
  }
}

PreparedOp prepare_equal(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  const DataType dtype = ctx.input(0).dtype;
  if (ctx.input(1).dtype != dtype) {
    ctx.fail("inputs have element types {} and {}; they must agree", dtype_name(dtype), dtype_name(ctx.input(1).dtype));
  }
  Broadcast bc = broadcast_inputs(ctx, 2);
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::boolean, bc.shape()}};
  op.kernel = [bc = std::move(bc), dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      const T* a = k.input(0).data<T>();
      const T* b = k.input(1).data<T>();
      bool* out = k.output(0).data<bool>();
      bc.parallel_runs(
          k.pool, [&](int64_t o, std::span<const int64_t> offsets, std::span<const int64_t> steps, int64_t n) {
            for (int64_t i = 0; i < n; ++i) {
              out[o + i] = comparable(a[offsets[0] + i * steps[0]]) == comparable(b[offsets[1] + i * steps[1]]);
            }
          });
    });
  };
  return op;
}

// ---- Tile ----

PreparedOp prepare_tile(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  const TensorInfo in = ctx.input(0);
  const auto repeats = constant_ints(ctx, 1, "repeats");
  if (repeats.size() != in.shape.size()) {
    ctx.fail("repeats {} has {} entries for an input of rank {}", shape_string(repeats), repeats.size(),
             in.shape.size());
  }
  std::vector<int64_t> shape;
  for (std::size_t a = 0; a < repeats.size(); ++a) {
    if (repeats[a] < 0) {
      ctx.fail("repeats {} has a negative entry", shape_string(repeats));
    }
    shape.push_back(checked_mul(in.shape[a], repeats[a], fmt::format("axis {} of the tiled shape", a)));
  }
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, shape}};
  op.kernel = [in_shape = in.shape, shape, dtype = in.dtype](KernelContext& k) {
    const int64_t total = element_count(shape);
    if (total == 0) {
      return;
    }
    const std::size_t size = element_size(dtype);
    const std::byte* src = k.input(0).raw();
    std::byte* dst = k.output(0).raw();
    if (shape.empty()) {
      std::memcpy(dst, src, size);
      return;
    }
    const auto strides = strides_of(in_shape);
    const std::size_t rank = shape.size();
    const int64_t row = shape.back();
    const int64_t in_row = in_shape.back();
    k.pool.parallel_for(total / row, std::max<int64_t>(1, copy_grain / row), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t rest = r;
        int64_t offset = 0;
        for (std::size_t a = rank - 1; a-- > 0;) {
          offset += (rest % shape[a]) % in_shape[a] * strides[a];
          rest /= shape[a];
        }
        std::byte* out = dst + static_cast<std::size_t>(r * row) * size;
        const auto bytes = static_cast<std::size_t>(in_row) * size;
        for (int64_t t = 0; t < row; t += in_row) {
          std::memcpy(out + static_cast<std::size_t>(t) * size, src + static_cast<std::size_t>(offset) * size, bytes);
        }
      }
    });
  };
  return op;
}

// ---- DepthToSpace, SpaceToDepth: a reshape to 6-D, a transpose, a reshape back ----

PreparedOp depth_space(OpContext& ctx, bool to_space) {
  ctx.expect_inputs(1, 1);
  const TensorInfo in = ctx.input(0);
  if (in.shape.size() != 4) {
    ctx.fail("input {} must have rank 4 (NCHW)", shape_string(in.shape));
  }
  const int64_t b = ctx.attr_int("blocksize", 0);
  if (b <= 0) {
    ctx.fail("blocksize {} must be positive", b);
  }
  const int64_t n = in.shape[0], c = in.shape[1], h = in.shape[2], w = in.shape[3];
  const int64_t block_area = checked_mul(b, b, "blocksize^2");
  std::vector<int64_t> view;  // the 6-D view of the input
  std::vector<std::size_t> perm;
  std::vector<int64_t> shape;
  if (to_space) {
    if (c % block_area != 0) {
      ctx.fail("channels {} are not a multiple of blocksize^2 = {}", c, block_area);
    }
    if (ctx.attr_string("mode", "DCR") == "CRD") {
      view = {n, c / block_area, b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      view = {n, b, b, c / block_area, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    }
    shape = {n, c / block_area, checked_mul(h, b, "the output height"), checked_mul(w, b, "the output width")};
  } else {
    if (h % b != 0 || w % b != 0) {
      ctx.fail("height {} and width {} must be multiples of blocksize {}", h, w, b);
    }
    view = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    shape = {n, checked_mul(c, block_area, "the output channels"), h / b, w / b};
  }
  const auto view_strides = strides_of(view);
  StridedCopy copy;
  for (std::size_t p : perm) {
    copy.shape.push_back(view[p]);
    copy.src_strides.push_back(view_strides[p]);
  }
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, shape}};
  op.kernel = strided_copy_kernel(in.dtype, std::move(copy));
  return op;
}

PreparedOp prepare_depth_to_space(OpContext& ctx) { return depth_space(ctx, true); }
PreparedOp prepare_space_to_depth(OpContext& ctx) { return depth_space(ctx, false); }

// ---- GatherElements ----

PreparedOp prepare_gather_elements(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(1, {DataType::int64, DataType::int32});
  const TensorInfo data = ctx.input(0);
  const TensorInfo indices = ctx.input(1);
  const auto rank = static_cast<int64_t>(data.shape.size());
  if (indices.shape.size() != data.shape.size() || rank == 0) {
    ctx.fail("indices {} must have the rank of data {} (at least 1)", shape_string(indices.shape),
             shape_string(data.shape));
  }
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), rank));
  PreparedOp op;
  op.outputs = {TensorInfo{data.dtype, indices.shape}};
  op.kernel = [axis, data_shape = data.shape, shape = indices.shape, dtype = data.dtype,
               label = ctx.node().label()](KernelContext& k) {
    const auto strides = strides_of(data_shape);
    const int64_t dim = data_shape[axis];
    const Tensor& idx = k.input(1);
    const std::byte* src = k.input(0).raw();
    std::byte* dst = k.output(0).raw();
    const std::size_t size = element_size(dtype);
    const int64_t total = element_count(shape);
    for (int64_t e = 0; e < total; ++e) {
      int64_t v = idx.dtype() == DataType::int64 ? idx.data<int64_t>()[e] : idx.data<int32_t>()[e];
      if (v < -dim || v >= dim) {
        throw EngineError(fmt::format("{}: index {} is out of range for axis {} of size {}", label, v, axis, dim));
      }
      v = v < 0 ? v + dim : v;
      int64_t rest = e;
      int64_t offset = 0;
      for (std::size_t a = shape.size(); a-- > 0;) {
        const int64_t i = rest % shape[a];
        rest /= shape[a];
        offset += (a == axis ? v : i) * strides[a];
      }
      std::memcpy(dst + static_cast<std::size_t>(e) * size, src + static_cast<std::size_t>(offset) * size, size);
    }
  };
  return op;
}

// ---- Trilu ----

PreparedOp prepare_trilu(OpContext& ctx) {
  ctx.expect_inputs(1, 2);
  const TensorInfo in = ctx.input(0);
  if (in.shape.size() < 2) {
    ctx.fail("input {} must have rank 2 or more", shape_string(in.shape));
  }
  const bool upper = ctx.attr_int("upper", 1) != 0;
  PreparedOp op;
  op.outputs = {in};
  op.kernel = [upper, shape = in.shape, dtype = in.dtype](KernelContext& k) {
    int64_t diagonal = 0;
    if (const Tensor* t = k.optional_input(1); t != nullptr && t->elements() > 0) {
      diagonal = t->data<int64_t>()[0];
    }
    const int64_t rows = shape[shape.size() - 2];
    const int64_t cols = shape.back();
    const int64_t matrices = element_count(shape) / std::max<int64_t>(rows * cols, 1);
    const std::size_t size = element_size(dtype);
    const std::byte* src = k.input(0).raw();
    std::byte* dst = k.output(0).raw();
    for (int64_t m = 0; m < matrices; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const auto at = static_cast<std::size_t>((m * rows + i) * cols + j) * size;
          const bool keep = upper ? j - i >= diagonal : j - i <= diagonal;
          if (keep) {
            std::memcpy(dst + at, src + at, size);
          } else {
            std::memset(dst + at, 0, size);
          }
        }
      }
    }
  };
  return op;
}

const OpRegistrar transpose_op{"Transpose", prepare_transpose, moves_values};
const OpRegistrar concat_op{"Concat", prepare_concat, moves_values};
const OpRegistrar split_op{"Split", prepare_split, moves_values};
const OpRegistrar slice_op{"Slice", prepare_slice, moves_values};
const OpRegistrar gather_op{"Gather", prepare_gather, moves_values};
const OpRegistrar pad_op{"Pad", prepare_pad};
const OpRegistrar where_op{"Where", prepare_where};
const OpRegistrar equal_op{"Equal", prepare_equal};
const OpRegistrar tile_op{"Tile", prepare_tile, moves_values};
const OpRegistrar depth_to_space_op{"DepthToSpace", prepare_depth_to_space, moves_values};
const OpRegistrar space_to_depth_op{"SpaceToDepth", prepare_space_to_depth, moves_values};
const OpRegistrar gather_elements_op{"GatherElements", prepare_gather_elements, moves_values};
const OpRegistrar trilu_op{"Trilu", prepare_trilu};

}  // namespace
}  // namespace rknnxx::host
