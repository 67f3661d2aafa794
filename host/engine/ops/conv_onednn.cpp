// Float32 Conv on oneDNN (docs/runtime-extensions.md, "Conv kernels"; the measurements behind the rule are
// in benchmarks/README.md, "Conv on oneDNN in the engine").
//
// The graph stays NCHW. A Conv is cut into slices, one oneDNN primitive per slice for one image, all made
// here at planning time with the weights reordered once to the format oneDNN picks: bands of output rows,
// each of all channels, when the blocked kernel takes NHWC (so NHWC stays one layout whatever the thread
// count, and a Conv with few output channels still uses every thread); else disjoint blocks of output
// channels (of groups when group > 1). A run hands the (image, slice) pairs to the engine's
// pool; each worker executes its slices with OpenMP limited to one thread on that thread, so oneDNN never
// starts an OpenMP team beside the pool (docs/runtime-extensions.md, "Threads"). Per class of shape, a
// slice either runs oneDNN's kernels on NCHW directly ("nchw") or reorders its input to oneDNN's blocked
// layout, runs the blocked kernel and reorders its output back ("blocked"). The fused chain of
// fusion.cpp (conv_epilogue.hpp) is post-ops of the primitive as far as oneDNN has them (clamp, HardSwish,
// HardSigmoid, Sigmoid, SiLU); the rest, from a residual Add on, runs on each slice's output right after it.

#include "conv_onednn.hpp"
#include "../blocked_layout.hpp"
#include "../float16.hpp"
#include "onednn_threads.hpp"

#if defined(RKNNXX_ENGINE_ONEDNN)

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>
#endif

namespace rknnxx::host {

#if !defined(RKNNXX_ENGINE_ONEDNN)

bool prepare_onednn_conv(const OpContext&, const OnednnConvRequest&, PreparedOp&) { return false; }

bool onednn_conv_built() noexcept { return false; }

bool onednn_conv_keeps_nhwc() { return false; }

#else

namespace {

enum class Layout { builtin, nchw, blocked };
// pointwise: 1x1 kernel without padding, group 1, any stride, without a fused activation (with one: as many
// output channels as input channels or more, or fewer); dense: the other group-1 Convs; depthwise: one input
// channel per group, on planes of at most 28x28 outputs or larger ones; grouped: the other groups.
enum class ShapeClass {
  pointwise,
  pointwise_activated_expanding,
  pointwise_activated_reducing,
  dense,
  depthwise_small,
  depthwise_large,
  grouped
};

// The per-class rule, from benchmarks/README.md ("Conv on oneDNN in the engine"): the layout that took the
// least CPU time per class, the engine's own kernels where neither oneDNN layout beat them. oneDNN's NCHW
// kernel is its GEMM, fast alone but slow with an eltwise post-op, so pointwise Convs with a fused activation
// take the blocked layout or the engine's kernel. Depthwise Convs on large planes, and pointwise ones that reduce
// the channels, lost to the engine's kernel by the reorders around them; where values stay in oneDNN's layout
// (blocked_layout.hpp) they skip those reorders and measured faster blocked (benchmarks/README.md, "Blocked values
// between Convs"; squeezenet's squeeze Convs between NHWC Concats and MaxPools). So do the pointwise Convs without
// an activation between kept values (the projections of mobilenet_v2's inverted residuals, residual included).
Layout measured_layout(ShapeClass c, bool values_kept) {
  switch (c) {
    case ShapeClass::pointwise: return values_kept ? Layout::blocked : Layout::nchw;
    case ShapeClass::pointwise_activated_expanding: return Layout::blocked;
    case ShapeClass::pointwise_activated_reducing: return values_kept ? Layout::blocked : Layout::builtin;
    case ShapeClass::dense: return Layout::blocked;
    case ShapeClass::depthwise_small: return Layout::blocked;
    case ShapeClass::depthwise_large: return values_kept ? Layout::blocked : Layout::builtin;
    case ShapeClass::grouped: return Layout::blocked;
  }
  return Layout::builtin;
}

// RKNNXX_ENGINE_CONV: unset or "auto" follows the rule; "builtin" keeps the engine's kernels;
// "onednn-nchw" and "onednn-blocked" put every Conv on oneDNN with that layout (tests, measurements).
Layout chosen_layout(const OpContext& ctx, ShapeClass c) {
  const char* env = std::getenv("RKNNXX_ENGINE_CONV");
  const std::string_view mode = env != nullptr ? env : "auto";
  if (mode == "auto" || mode.empty()) return measured_layout(c, blocked_layout_enabled());
  if (mode == "builtin") return Layout::builtin;
  if (mode == "onednn-nchw") return Layout::nchw;
  if (mode == "onednn-blocked") return Layout::blocked;
  ctx.fail("RKNNXX_ENGINE_CONV is '{}'; expected auto, builtin, onednn-nchw or onednn-blocked", mode);
}

}  // namespace

namespace {

const dnnl::engine& cpu_engine() { return onednn_cpu_engine(); }

constexpr std::size_t alignment = 64;

std::size_t aligned(std::size_t bytes) { return (bytes + alignment - 1) / alignment * alignment; }

struct Slice {
  int64_t in_first = 0;                         // its first input channel
  int64_t src_offset = 0, kept_src_offset = 0;  // floats into one image of the input: NCHW, kept layout
  int64_t dst_offset = 0, kept_dst_offset = 0;  // floats into one image of the output: NCHW, kept layout
  int64_t bias_offset = 0;                      // channels
  dnnl::memory::desc user_src, user_dst;        // NCHW views into one image
  dnnl::memory::desc conv_src, conv_dst;        // what the primitive takes (= user_* for Layout::nchw)
  dnnl::memory::desc scratchpad, bias;
  dnnl::convolution_forward conv;
  dnnl::memory weights;                      // reordered once
  std::optional<dnnl::reorder> src_reorder;  // blocked, group > 1: this slice's own input
  std::optional<dnnl::reorder> dst_reorder;  // blocked
  std::size_t scratchpad_offset = 0, src_offset_bytes = 0, dst_offset_bytes = 0;  // in a worker's region
};

struct OnednnConv {
  std::vector<Slice> slices;
  bool bands = false;  // slices of output rows, else of output channels
  bool has_bias = false;
  Epilogue epilogue;           // the fused chain
  std::size_t first_tail = 0;  // its steps from here on run after the primitive
  std::size_t end_tail = 0;    // up to here
  int64_t batch = 0, in_image = 0, out_image = 0, out_channels = 1;
  // Blocked with group 1: every slice reads the whole input, reordered once per image before the slices.
  std::optional<dnnl::reorder> shared_src_reorder;
  dnnl::memory::desc shared_user_src, shared_conv_src;
  std::size_t shared_src_bytes = 0;  // per image, aligned
  std::size_t worker_bytes = 0;      // per worker, aligned
  // Per slice: the user's source, the primitive's source, its destination, scratchpad and bias, the user's output.
  static constexpr std::size_t slice_slots = 6;
  std::optional<OnednnWorkers> memories;  // made once the slices are known
  // Input and output kept in the primitive's layout by blocked_layout.hpp: no reorder, images this many
  // floats apart. A slice's offsets are the same as in NCHW, as its first channel starts a block.
  bool kept_src = false, kept_dst = false;
  int64_t kept_in_image = 0, kept_out_image = 0;

  void run(KernelContext& k) const {
    const float* x = k.input(0).data<float>();
    const float* bias = has_bias ? k.input(2).data<float>() : nullptr;
    float* y = k.output(0).data<float>();
    const float* residual =
        epilogue.has_residual() && end_tail > epilogue.steps_before_residual() ? k.input(3).data<float>() : nullptr;
    const dnnl::engine& engine = cpu_engine();
    std::byte* shared = k.scratch;
    std::byte* workers = k.scratch + shared_src_bytes * static_cast<std::size_t>(batch);
    const int64_t in_image_floats = kept_src ? kept_in_image : in_image;
    const int64_t out_image_floats = kept_dst ? kept_out_image : out_image;
    if (shared_src_reorder && !kept_src) {
      k.pool.parallel_for(batch, 1, [&](int64_t begin, int64_t end) {
        SerialOpenmp serial;
        dnnl::stream stream(engine);
        for (int64_t n = begin; n < end; ++n) {
          dnnl::memory from(shared_user_src, engine, const_cast<float*>(x + n * in_image));
          dnnl::memory to(shared_conv_src, engine, shared + shared_src_bytes * static_cast<std::size_t>(n));
          shared_src_reorder->execute(stream, from, to);
        }
        stream.wait();
      });
    }
    const auto count = static_cast<int64_t>(slices.size());
    k.pool.parallel_for(batch * count, 1, [&](int64_t begin, int64_t end, std::size_t worker) {
      SerialOpenmp serial;
      OnednnWorkers::Objects& w = memories->of(worker);
      dnnl::stream& stream = w.stream;
      std::byte* region = workers + worker_bytes * worker;
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / count;
        const auto slice = static_cast<std::size_t>(t % count);
        const Slice& s = slices[slice];
        const auto slot = [&](std::size_t i, const dnnl::memory::desc& desc, const void* data) -> dnnl::memory& {
          return w.point(slice * slice_slots + i, desc, data);
        };
        const float* user_src = x + n * in_image_floats + (kept_src ? s.kept_src_offset : s.src_offset);
        float* user_dst = y + n * out_image_floats + (kept_dst ? s.kept_dst_offset : s.dst_offset);
        const void* src_data = user_src;
        if (!kept_src && shared_src_reorder) {
          src_data = shared + shared_src_bytes * static_cast<std::size_t>(n);
        } else if (!kept_src && s.src_reorder) {
          src_data = region + s.src_offset_bytes;
          execute_primitive(
              *s.src_reorder, stream,
              {{DNNL_ARG_FROM, &slot(0, s.user_src, user_src)}, {DNNL_ARG_TO, &slot(1, s.conv_src, src_data)}});
        }
        const dnnl::memory& src = slot(1, s.conv_src, src_data);
        const bool reorder_dst = s.dst_reorder && !kept_dst;
        const dnnl::memory& dst =
            slot(2, s.conv_dst, reorder_dst ? static_cast<const void*>(region + s.dst_offset_bytes) : user_dst);
        const dnnl::memory& scratchpad = slot(3, s.scratchpad, region + s.scratchpad_offset);
        execute_primitive(s.conv, stream,
                          {{DNNL_ARG_SRC, &src},
                           {DNNL_ARG_WEIGHTS, &s.weights},
                           {DNNL_ARG_DST, &dst},
                           {DNNL_ARG_SCRATCHPAD, &scratchpad},
                           {DNNL_ARG_BIAS, bias != nullptr ? &slot(4, s.bias, bias + s.bias_offset) : nullptr}});
        if (reorder_dst) {
          execute_primitive(*s.dst_reorder, stream,
                            {{DNNL_ARG_FROM, &dst}, {DNNL_ARG_TO, &slot(5, s.user_dst, user_dst)}});
        }
        // The slice's output just written, in parts the chain's rest and the rounding walk: one span in a kept
        // layout (its blocks or rows, padded channels included: blocked_ports keeps a chain's rest off padding),
        // else the slice's rows of each channel plane. The residual is in the output's layout (kept with it,
        // BlockedPorts::tied_input), so it is read at the same offsets.
        const float* r = residual != nullptr ? residual + (user_dst - y) : nullptr;
        const dnnl::memory::dims dims = s.user_dst.dims();
        const int64_t plane = out_image / out_channels, span = dims[2] * dims[3];  // span: the slice's rows
        const auto each_part = [&](auto&& f) {
          // One run of values (kept, or NCHW planes of every row, end to end): in pieces, so that the rest and the
          // rounding find each in the first-level cache.
          if (kept_dst || span == plane) {
            const auto total = kept_dst ? static_cast<int64_t>(s.conv_dst.get_size() / sizeof(float)) : dims[1] * plane;
            for (int64_t p = 0; p < total; p += finish_piece)
              f(user_dst + p, r != nullptr ? r + p : nullptr, std::min(finish_piece, total - p));
            return;
          }
          for (int64_t c = 0; c < dims[1]; ++c) f(user_dst + c * plane, r != nullptr ? r + c * plane : nullptr, span);
        };
        if (first_tail < end_tail || k.finish_output) {
          each_part([&](float* part, const float* residual_part, int64_t n) {
            if (first_tail < end_tail) epilogue.apply(part, n, 0.0f, false, residual_part, first_tail, end_tail);
            if (k.finish_output) k.finish_output(part, static_cast<std::size_t>(n));
          });
        }
      }
      stream.wait();
    });
  }
};

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// The layouts blocked_layout.hpp may keep a value in. Each channel slice's part of the value (the channels it
// reads or writes) lies where its channels start in NCHW: in oneDNN's blocks of channels, when every slice
// starts a block, the bytes do not depend on the slicing; in NHWC each slice's channels are dense NHWC of their
// own, one slice after another, so the slicing is part of the layout and both sides must share it. One slice,
// or bands of rows (each of all channels), make plain NHWC.
struct KeptFormat {
  tag format;
  const char* name;
  int64_t block;  // channels; 0: NHWC per slice
};
constexpr KeptFormat kept_formats[] = {
    {tag::nChw16c, "nChw16c", 16}, {tag::nChw8c, "nChw8c", 8}, {tag::nhwc, nhwc_layout, 0}};

struct KeptLayout {
  const KeptFormat* format = nullptr;  // nullptr: none
  std::string name;                    // BlockedPorts' layout
};

// The kept layout of the slices' `part` (source or destination), given each slice's first channel.
KeptLayout kept_layout(std::span<const Slice> slices, bool bands, dnnl::memory::desc Slice::*part,
                       int64_t Slice::*first) {
  for (const KeptFormat& f : kept_formats) {
    const bool fits = std::all_of(slices.begin(), slices.end(), [&](const Slice& s) {
      const dnnl::memory::desc& d = s.*part;
      return d == dnnl::memory::desc(d.dims(), dt::f32, f.format) && (f.block == 0 || s.*first % f.block == 0);
    });
    if (!fits) continue;
    KeptLayout kept{&f, f.name};
    for (const Slice& s : slices) {
      if (f.block == 0 && !bands && slices.size() > 1) {
        kept.name += " " + std::to_string(s.*first) + "+" + std::to_string((s.*part).dims()[1]);
      }
    }
    return kept;
  }
  return {};
}

// Floats of one image of `channels` x h x w in format `f`, with its padded channels.
int64_t kept_image_floats(const KeptFormat& f, int64_t channels, int64_t h, int64_t w) {
  return static_cast<int64_t>(dnnl::memory::desc({1, channels, h, w}, dt::f32, f.format).get_size() / sizeof(float));
}

// What this Conv offers blocked_layout.hpp: its input when the primitive reads it in a kept layout (one reorder
// for every slice, or each slice's own), its output likewise. The steps of the fused chain that are not post-ops
// work element by element, so they run on a kept output too where it has no padded channels (their values would
// not stay zero); a residual Add among them reads input 3 in the output's layout, tied to it. `chain_output`: the
// chain's end is the step's output (not so when the caller adds a residual of another shape).
std::shared_ptr<const BlockedPorts> blocked_ports(const std::shared_ptr<OnednnConv>& impl, const WindowGeometry& g,
                                                  bool chain_output) {
  auto ports = std::make_shared<BlockedPorts>();
  ports->keep_input = [impl](std::size_t input) {
    if (input == 0) impl->kept_src = true;  // input 3, the residual, is kept with the output (tied_input)
  };
  const std::span<const Slice> slices(impl->slices);
  const auto in_slices = impl->shared_src_reorder ? slices.first(1) : slices;
  if (KeptLayout in = kept_layout(in_slices, impl->bands, &Slice::conv_src, &Slice::in_first); in.format != nullptr) {
    ports->input_layout = std::move(in.name);
    impl->kept_in_image = kept_image_floats(*in.format, g.channels, g.in_h, g.in_w);
  }
  KeptLayout out =
      chain_output ? kept_layout(slices, impl->bands, &Slice::conv_dst, &Slice::bias_offset) : KeptLayout{};
  const bool has_tail = impl->first_tail < impl->end_tail;
  if (has_tail && out.format != nullptr && out.format->block != 0 && impl->out_channels % out.format->block != 0) {
    out = {};
  }
  if (out.format != nullptr) {
    if (has_tail && impl->epilogue.has_residual()) ports->tied_input = 3;
    ports->output_layout = std::move(out.name);
    impl->kept_out_image = kept_image_floats(*out.format, impl->out_channels, g.out_h, g.out_w);
    ports->output_bytes = static_cast<std::size_t>(impl->kept_out_image * g.batch) * sizeof(float);
    ports->keep_output = [impl] { impl->kept_dst = true; };
  }
  return ports;
}

}  // namespace

bool onednn_conv_built() noexcept { return true; }

std::vector<int64_t> slice_bounds(int64_t units, int64_t step, std::size_t threads) {
  const int64_t steps = (units + step - 1) / step;
  const int64_t count = std::clamp<int64_t>(static_cast<int64_t>(threads), 1, steps);
  const int64_t per = (steps + count - 1) / count * step;
  std::vector<int64_t> bounds{0};
  while (bounds.back() < units) bounds.push_back(std::min(units, bounds.back() + per));
  return bounds;
}

Band band_rows(const WindowGeometry& g, int64_t begin, int64_t end) {
  const int64_t reach = (g.kernel_h - 1) * g.dilation_h + 1;
  const int64_t top = begin * g.stride_h - g.pad_top;                 // may lie in the padding
  const int64_t bottom = (end - 1) * g.stride_h - g.pad_top + reach;  // one past the last row read
  const int64_t first = std::max<int64_t>(0, top), last = std::min(g.in_h, bottom);
  return {first, last - first, first - top, bottom - last};
}

std::vector<int64_t> row_bands(const WindowGeometry& g, std::size_t threads) {
  const std::vector<int64_t> bounds = slice_bounds(g.out_h, 1, threads);
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    if (band_rows(g, bounds[i], bounds[i + 1]).rows <= 0) return {0, g.out_h};
  }
  return bounds;
}

bool onednn_conv_keeps_nhwc() {
  const dnnl::memory::desc image({1, 16, 8, 8}, dt::f32, tag::any), weights({16, 16, 3, 3}, dt::f32, tag::any);
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             image, weights, image, {1, 1}, {1, 1}, {1, 1});
  const dnnl::convolution_forward::primitive_desc pd(desc, cpu_engine());
  return pd.src_desc() == dnnl::memory::desc({1, 16, 8, 8}, dt::f32, tag::nhwc);
}

bool prepare_onednn_conv(const OpContext& ctx, const OnednnConvRequest& r, PreparedOp& op) {
  const WindowGeometry& g = r.g;
  const Tensor* weights = ctx.constant(1);
  if (weights == nullptr || g.batch <= 0 || g.out_h <= 0 || g.out_w <= 0 || r.out_channels <= 0) return false;
  const int64_t in_per_group = g.channels / r.group;
  const int64_t out_per_group = r.out_channels / r.group;
  ShapeClass shape_class = ShapeClass::dense;
  if (r.group > 1 && in_per_group == 1) {
    shape_class = g.out_size() <= 28 * 28 ? ShapeClass::depthwise_small : ShapeClass::depthwise_large;
  } else if (r.group > 1) {
    shape_class = ShapeClass::grouped;
  } else if (g.kernel_h == 1 && g.kernel_w == 1 && g.pad_top == 0 && g.pad_left == 0 && g.pad_bottom == 0 &&
             g.pad_right == 0) {
    const bool has_activation = !r.epilogue.empty() && r.epilogue.steps[0].kind != EpilogueKind::add;
    shape_class = !has_activation      ? ShapeClass::pointwise
        : r.out_channels >= g.channels ? ShapeClass::pointwise_activated_expanding
                                       : ShapeClass::pointwise_activated_reducing;
  }
  const Layout layout = chosen_layout(ctx, shape_class);
  if (layout == Layout::builtin) return false;

  SerialOpenmp serial;  // primitives made for one thread run on one thread
  const dnnl::engine& engine = cpu_engine();
  dnnl::stream stream(engine);
  auto impl = std::make_shared<OnednnConv>();
  impl->has_bias = ctx.has_input(2);
  impl->batch = g.batch;
  impl->in_image = checked_mul(g.channels, g.in_size(), "the input size");
  impl->out_image = checked_mul(r.out_channels, g.out_size(), "the output size");
  const int64_t kernel = g.kernel_h * g.kernel_w;
  const dnnl::memory::dims strides{g.stride_h, g.stride_w}, dilates{g.dilation_h - 1, g.dilation_w - 1};
  const dnnl::memory::dims pad_l{g.pad_top, g.pad_left}, pad_r{g.pad_bottom, g.pad_right};
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  std::size_t post_op_steps = 0;  // the leading steps of the chain oneDNN takes as post-ops
  {
    dnnl::post_ops post;
    // oneDNN 2.6's JIT kernels may keep one eltwise injector per algorithm: a second eltwise_linear computed
    // with the first one's constants (engine.fusion's PP-LCNetV3 chain). So the post-ops end before an
    // algorithm repeats, and the engine applies the rest.
    std::vector<dnnl::algorithm> used;
    const auto fits = [&](std::initializer_list<dnnl::algorithm> algorithms) {
      for (dnnl::algorithm a : algorithms) {
        if (std::find(used.begin(), used.end(), a) != used.end()) return false;
      }
      used.insert(used.end(), algorithms);
      return true;
    };
    using alg = dnnl::algorithm;
    for (const EpilogueStep& step : r.epilogue.steps) {
      if (step.kind == EpilogueKind::clamp && step.a == 0.0f && step.b == std::numeric_limits<float>::max() &&
          fits({alg::eltwise_relu})) {
        post.append_eltwise(1.0f, alg::eltwise_relu, 0.0f, 0.0f);
      } else if (step.kind == EpilogueKind::clamp && fits({alg::eltwise_clip})) {
        post.append_eltwise(1.0f, alg::eltwise_clip, step.a, step.b);
      } else if (step.kind == EpilogueKind::hard_swish && step.a == 1.0f / 6.0f && step.b == 0.5f &&
                 fits({alg::eltwise_hardswish})) {
        post.append_eltwise(1.0f, alg::eltwise_hardswish, 0.0f, 0.0f);
      } else if (step.kind == EpilogueKind::hard_sigmoid && fits({alg::eltwise_linear, alg::eltwise_clip})) {
        post.append_eltwise(1.0f, alg::eltwise_linear, step.a, step.b);
        post.append_eltwise(1.0f, alg::eltwise_clip, 0.0f, 1.0f);
      } else if (step.kind == EpilogueKind::sigmoid && fits({alg::eltwise_logistic})) {
        post.append_eltwise(1.0f, alg::eltwise_logistic, 0.0f, 0.0f);
      } else if (step.kind == EpilogueKind::silu && fits({alg::eltwise_swish})) {
        post.append_eltwise(1.0f, alg::eltwise_swish, 1.0f, 0.0f);
      } else if (step.kind == EpilogueKind::affine && fits({alg::eltwise_linear})) {
        post.append_eltwise(1.0f, alg::eltwise_linear, step.a, step.b);
      } else {
        break;
      }
      ++post_op_steps;
    }
    if (post_op_steps > 0) attr.set_post_ops(post);
  }
  impl->epilogue = r.epilogue;
  impl->first_tail = post_op_steps;
  impl->end_tail = r.residual_in_epilogue ? r.epilogue.steps.size() : r.epilogue.steps_before_residual();
  impl->out_channels = r.out_channels;
  const bool grouped = r.group > 1;
  // oneDNN's weight dimensions: OIHW, or GOIHW (per group) when grouped.
  const auto weight_dims = [&](int64_t groups, int64_t out_c, int64_t in_c) {
    return grouped ? dnnl::memory::dims{groups, out_c / groups, in_c / groups, g.kernel_h, g.kernel_w}
                   : dnnl::memory::dims{out_c, in_c, g.kernel_h, g.kernel_w};
  };
  const auto primitive_desc = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& w,
                                  const dnnl::memory::desc& dst, const dnnl::memory::dims& top_left,
                                  const dnnl::memory::dims& bottom_right) {
    const dnnl::memory::desc bias({dst.dims()[1]}, dt::f32, tag::a);
    const auto desc = impl->has_bias
        ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                          w, bias, dst, strides, dilates, top_left, bottom_right)
        : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                          w, dst, strides, dilates, top_left, bottom_right);
    return dnnl::convolution_forward::primitive_desc(desc, attr, engine);
  };
  std::size_t worker_bytes = 0;
  try {
    std::vector<int64_t> bounds;
    if (layout == Layout::blocked) {  // bands when the kernel oneDNN picks for the whole Conv takes NHWC
      const dnnl::memory::dims src_dims{1, g.channels, g.in_h, g.in_w}, dst_dims{1, r.out_channels, g.out_h, g.out_w};
      const auto whole =
          primitive_desc(dnnl::memory::desc(src_dims, dt::f32, tag::any),
                         dnnl::memory::desc(weight_dims(r.group, r.out_channels, g.channels), dt::f32, tag::any),
                         dnnl::memory::desc(dst_dims, dt::f32, tag::any), pad_l, pad_r);
      impl->bands = whole.src_desc() == dnnl::memory::desc(src_dims, dt::f32, tag::nhwc) &&
          whole.dst_desc() == dnnl::memory::desc(dst_dims, dt::f32, tag::nhwc);
      if (impl->bands) {
        bounds = row_bands(g, ctx.threads());
      }
    }
    // Output channels are cut in multiples of 16 (AVX-512's block); groups so that a slice's channels are too.
    const int64_t group_step = grouped && 16 % out_per_group == 0 ? std::max<int64_t>(1, 16 / out_per_group) : 1;
    if (!impl->bands) {
      bounds =
          grouped ? slice_bounds(r.group, group_step, ctx.threads()) : slice_bounds(r.out_channels, 16, ctx.threads());
    }
    const bool shared_src = layout == Layout::blocked && !grouped && !impl->bands;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      const int64_t first = bounds[i], units = bounds[i + 1] - bounds[i];
      Slice s;
      const Band band = impl->bands ? band_rows(g, first, first + units) : Band{0, g.in_h, g.pad_top, g.pad_bottom};
      // A band has every channel; a slice its groups' or its own output channels.
      const int64_t groups = impl->bands ? r.group : grouped ? units : 1;
      const int64_t in_c = grouped ? groups * in_per_group : g.channels;
      const int64_t out_c = impl->bands ? r.out_channels : grouped ? groups * out_per_group : units;
      const int64_t out_rows = impl->bands ? units : g.out_h;
      s.in_first = grouped && !impl->bands ? first * in_per_group : 0;
      s.bias_offset = impl->bands ? 0 : grouped ? first * out_per_group : first;
      if (impl->bands) {
        s.src_offset = band.first * g.in_w;
        s.kept_src_offset = s.src_offset * g.channels;
        s.dst_offset = first * g.out_w;
        s.kept_dst_offset = s.dst_offset * r.out_channels;
      } else {
        s.src_offset = s.kept_src_offset = s.in_first * g.in_size();
        s.dst_offset = s.kept_dst_offset = s.bias_offset * g.out_size();
      }
      // Views into one NCHW image: a band's rows are strided by the whole planes.
      s.user_src = dnnl::memory::desc({1, in_c, band.rows, g.in_w}, dt::f32,
                                      dnnl::memory::dims{in_c * g.in_size(), g.in_size(), g.in_w, 1});
      s.user_dst = dnnl::memory::desc({1, out_c, out_rows, g.out_w}, dt::f32,
                                      dnnl::memory::dims{out_c * g.out_size(), g.out_size(), g.out_w, 1});
      const dnnl::memory::dims w_dims = weight_dims(groups, out_c, in_c);
      const dnnl::memory::desc user_w(w_dims, dt::f32, grouped ? tag::goihw : tag::oihw);
      const float* w = weights->data<float>() + s.bias_offset * in_per_group * kernel;
      dnnl::memory::desc src_any = s.user_src, dst_any = s.user_dst;
      if (impl->bands) {  // what the probe above found oneDNN to pick
        src_any = dnnl::memory::desc({1, in_c, band.rows, g.in_w}, dt::f32, tag::nhwc);
        dst_any = dnnl::memory::desc({1, out_c, out_rows, g.out_w}, dt::f32, tag::nhwc);
      } else if (layout == Layout::blocked) {
        src_any = shared_src && i > 0 ? impl->shared_conv_src
                                      : dnnl::memory::desc({1, in_c, g.in_h, g.in_w}, dt::f32, tag::any);
        dst_any = dnnl::memory::desc({1, out_c, g.out_h, g.out_w}, dt::f32, tag::any);
      }
      const auto pd = primitive_desc(src_any, dnnl::memory::desc(w_dims, dt::f32, tag::any), dst_any,
                                     {band.pad_top, g.pad_left}, {band.pad_bottom, g.pad_right});
      s.conv_src = pd.src_desc();
      s.conv_dst = pd.dst_desc();
      s.scratchpad = pd.scratchpad_desc();
      s.bias = dnnl::memory::desc({out_c}, dt::f32, tag::a);
      s.conv = dnnl::convolution_forward(pd);
      if (impl->bands && i > 0 && pd.weights_desc() == impl->slices[0].weights.get_desc()) {
        s.weights = impl->slices[0].weights;  // every band reads all the weights: one copy
      } else {
        s.weights = dnnl::memory(pd.weights_desc(), engine);
        dnnl::memory user_w_memory(user_w, engine, const_cast<float*>(w));
        dnnl::reorder(user_w_memory, s.weights).execute(stream, user_w_memory, s.weights);
      }
      std::size_t bytes = 0;
      s.scratchpad_offset = bytes;
      bytes += aligned(pd.scratchpad_desc().get_size());
      if (layout == Layout::blocked) {
        if (shared_src) {
          if (i == 0) {
            impl->shared_user_src = s.user_src;
            impl->shared_conv_src = s.conv_src;
            impl->shared_src_bytes = aligned(s.conv_src.get_size());
            impl->shared_src_reorder =
                dnnl::reorder(dnnl::reorder::primitive_desc(engine, s.user_src, engine, s.conv_src));
          }
        } else if (s.conv_src != s.user_src) {
          s.src_offset_bytes = bytes;
          bytes += aligned(s.conv_src.get_size());
          s.src_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine, s.user_src, engine, s.conv_src));
        }
        if (s.conv_dst != s.user_dst) {
          s.dst_offset_bytes = bytes;
          bytes += aligned(s.conv_dst.get_size());
          s.dst_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine, s.conv_dst, engine, s.user_dst));
        }
      }
      worker_bytes = std::max(worker_bytes, bytes);
      impl->slices.push_back(std::move(s));
    }
    stream.wait();
  } catch (const dnnl::error&) {
    return false;  // a Conv oneDNN does not take stays on the engine's kernels
  }
  impl->worker_bytes = aligned(worker_bytes);
  impl->memories.emplace(ctx.threads(), impl->slices.size() * OnednnConv::slice_slots);
  const int64_t shared_bytes = checked_mul(static_cast<int64_t>(impl->shared_src_bytes), g.batch, "the scratch size");
  const int64_t workers_bytes =
      checked_mul(static_cast<int64_t>(impl->worker_bytes), static_cast<int64_t>(ctx.threads()), "the scratch size");
  op.scratch_bytes = static_cast<std::size_t>(checked_add(shared_bytes, workers_bytes, "the scratch size"));
  if (layout == Layout::blocked) {
    op.blocked = blocked_ports(impl, g, !r.epilogue.has_residual() || r.residual_in_epilogue);
  }
  op.kernel = [impl](KernelContext& k) { impl->run(k); };
  op.finishes_output = true;
  return true;
}

#endif

}  // namespace rknnxx::host
