// The engine's float32 Conv kernels against oneDNN and XNNPACK on the convolution shapes of resnet18 and
// mobilenet_v2 (1x1, 3x3, 7x7, depthwise, grouped, strided), as ratios (README.md, "Conv: the engine's
// kernels against oneDNN and XNNPACK"). A measurement, never a test.
//
//   conv_libraries [--threads N] [--runs R] [--warmup W]
//
// Per shape, R rounds (after W untimed ones) each timing one run of every variant in turn, so that the
// machine's load hits them alike; the median and the best run of each, and their ratios to the engine's. With
// --threads 1 (the default) every variant runs on the calling thread and is timed by its CPU time
// (CLOCK_THREAD_CPUTIME_ID), which other processes on a busy machine do not inflate; else by the wall clock:
//   engine      a one-Conv session of the host engine (NCHW in and out, bias, as the models run it)
//   dnnl        oneDNN's primitive on the layouts it chooses itself (blocked nChw8c / nChw16c), weights
//               reordered once: what a graph planned for oneDNN's layout would pay per Conv
//   dnnl+nchw   the same plus the reorders of the input from and of the output to NCHW: what swapping
//               oneDNN in for one Conv of the engine's NCHW graph pays
//   xnnpack     XNNPACK's NHWC operator (1 thread: the pthreadpool is not set up here)
// Every library's output is checked against the engine's (largest difference relative to the largest value).
// oneDNN runs its own OpenMP threads (Debian builds it so), set to N; the engine runs its pool with N.
#include "engine.hpp"

#include <dnnl.hpp>
#include <fmt/core.h>
#include <omp.h>
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace rknnxx::host;

struct Shape {
  const char* name;
  int64_t channels, height, width, out_channels, kernel, stride, pad, group;
};

// From resnet18 and mobilenet_v2 (torchvision, 224x224), and one grouped Conv (ResNeXt-style; neither model has one).
const Shape shapes[] = {
    {"r18 7x7/2 3->64 @224", 3, 224, 224, 64, 7, 2, 3, 1},      {"r18 3x3 64->64 @56", 64, 56, 56, 64, 3, 1, 1, 1},
    {"r18 3x3/2 64->128 @56", 64, 56, 56, 128, 3, 2, 1, 1},     {"r18 1x1/2 64->128 @56", 64, 56, 56, 128, 1, 2, 0, 1},
    {"r18 3x3 256->256 @14", 256, 14, 14, 256, 3, 1, 1, 1},     {"r18 3x3 512->512 @7", 512, 7, 7, 512, 3, 1, 1, 1},
    {"mv2 3x3/2 3->32 @224", 3, 224, 224, 32, 3, 2, 1, 1},      {"mv2 1x1 24->144 @56", 24, 56, 56, 144, 1, 1, 0, 1},
    {"mv2 1x1 144->24 @56", 144, 56, 56, 24, 1, 1, 0, 1},       {"mv2 1x1 96->576 @14", 96, 14, 14, 576, 1, 1, 0, 1},
    {"mv2 1x1 320->1280 @7", 320, 7, 7, 1280, 1, 1, 0, 1},      {"mv2 dw3x3 96 @112", 96, 112, 112, 96, 3, 1, 1, 96},
    {"mv2 dw3x3/2 144 @56", 144, 56, 56, 144, 3, 2, 1, 144},    {"mv2 dw3x3 960 @7", 960, 7, 7, 960, 3, 1, 1, 960},
    {"grouped 3x3 g32 128 @28", 128, 28, 28, 128, 3, 1, 1, 32},
};

struct Options {
  int threads = 1, runs = 20, warmup = 3;
};

// With one thread every variant runs on the calling thread: its CPU time, which a busy machine's preemption does
// not inflate. With more, the wall clock.
double now_ms(int threads) {
  if (threads == 1) {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  double median = 0, best = 0;
};

// The variants of one shape run interleaved (one run of each in turn, R times after W warm-up rounds) so that
// a change of the machine's load hits them alike; the median and the best run of each.
std::vector<Timing> time_interleaved(const Options& o, const std::vector<std::function<void()>>& variants) {
  for (int i = 0; i < o.warmup; ++i)
    for (const auto& f : variants) f();
  std::vector<std::vector<double>> times(variants.size());
  for (int i = 0; i < o.runs; ++i) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const double start = now_ms(o.threads);
      variants[v]();
      times[v].push_back(now_ms(o.threads) - start);
    }
  }
  std::vector<Timing> result;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    result.push_back({t[t.size() / 2], t.front()});
  }
  return result;
}

int64_t out_size(int64_t in, const Shape& s) { return (in + 2 * s.pad - s.kernel) / s.stride + 1; }

onnx::TensorProto proto(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  onnx::TensorProto p;
  p.name = name;
  p.data_type = onnx::DataType::float32;
  p.dims = dims;
  p.float_data = v;
  return p;
}

onnx::AttributeProto ints(std::string name, std::vector<int64_t> v) {
  onnx::AttributeProto a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::ints;
  a.ints = std::move(v);
  return a;
}

// The largest |a - b| relative to the largest |a|: the libraries sum in other orders, so about 1e-6.
double difference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, top = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    top = std::max(top, static_cast<double>(std::fabs(a[i])));
  }
  return diff / top;
}

struct Result {
  Timing engine, dnnl, dnnl_nchw, xnnpack;  // xnnpack.median 0: not run
  double dnnl_error = 0, xnnpack_error = 0;
};

Result measure(const Shape& s, const Options& o) {
  const int64_t oh = out_size(s.height, s), ow = out_size(s.width, s);
  const int64_t cg = s.channels / s.group, mg = s.out_channels / s.group;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto fill = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = uniform(random);
    return v;
  };
  const std::vector<float> x = fill(static_cast<std::size_t>(s.channels * s.height * s.width));
  const std::vector<float> w = fill(static_cast<std::size_t>(s.out_channels * cg * s.kernel * s.kernel));
  const std::vector<float> b = fill(static_cast<std::size_t>(s.out_channels));
  Result r;

  // The engine: one Conv node, planned before timing.
  onnx::ModelProto model;
  model.ir_version = 8;
  model.opset_import.push_back({"", 13});
  onnx::ValueInfoProto in;
  in.name = "x";
  in.elem_type = onnx::DataType::float32;
  in.has_shape = true;
  for (int64_t d : {int64_t{1}, s.channels, s.height, s.width}) in.shape.push_back({true, d, ""});
  model.graph.input.push_back(in);
  onnx::ValueInfoProto out;
  out.name = "y";
  model.graph.output.push_back(out);
  model.graph.initializer.push_back(proto("w", {s.out_channels, cg, s.kernel, s.kernel}, w));
  model.graph.initializer.push_back(proto("b", {s.out_channels}, b));
  onnx::NodeProto conv;
  conv.op_type = "Conv";
  conv.name = "conv";
  conv.input = {"x", "w", "b"};
  conv.output = {"y"};
  conv.attribute = {ints("strides", {s.stride, s.stride}), ints("pads", {s.pad, s.pad, s.pad, s.pad})};
  onnx::AttributeProto group;
  group.name = "group";
  group.type = onnx::AttributeProto::Type::int_;
  group.i = s.group;
  conv.attribute.push_back(group);
  model.graph.node.push_back(conv);
  Session session(model, {.threads = static_cast<std::size_t>(o.threads)});
  Tensor input(DataType::float32, {1, s.channels, s.height, s.width});
  std::copy(x.begin(), x.end(), input.data<float>());
  std::vector<Tensor> inputs{input};
  std::vector<float> expected;
  {
    const std::vector<Tensor> outputs = session.run(inputs);
    const float* y = outputs.at(0).data<float>();
    expected.assign(y, y + outputs[0].elements());
  }
  std::vector<std::function<void()>> variants{[&] { session.run(inputs); }};

  // oneDNN: the primitive picks its layouts (format_tag::any).
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  omp_set_num_threads(o.threads);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::dims src_dims{1, s.channels, s.height, s.width}, dst_dims{1, s.out_channels, oh, ow};
  const dnnl::memory::dims w_dims = s.group == 1 ? dnnl::memory::dims{s.out_channels, cg, s.kernel, s.kernel}
                                                 : dnnl::memory::dims{s.group, mg, cg, s.kernel, s.kernel};
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             {src_dims, dt::f32, tag::any}, {w_dims, dt::f32, tag::any},
                                             {{s.out_channels}, dt::f32, tag::a}, {dst_dims, dt::f32, tag::any},
                                             {s.stride, s.stride}, {s.pad, s.pad}, {s.pad, s.pad});
  const dnnl::convolution_forward::primitive_desc pd(desc, engine);
  dnnl::memory user_src({src_dims, dt::f32, tag::nchw}, engine, const_cast<float*>(x.data()));
  dnnl::memory user_w({w_dims, dt::f32, s.group == 1 ? tag::oihw : tag::goihw}, engine, const_cast<float*>(w.data()));
  dnnl::memory bias({{s.out_channels}, dt::f32, tag::a}, engine, const_cast<float*>(b.data()));
  std::vector<float> y_nchw(expected.size());
  dnnl::memory user_dst({dst_dims, dt::f32, tag::nchw}, engine, y_nchw.data());
  dnnl::memory src(pd.src_desc(), engine), weights(pd.weights_desc(), engine), dst(pd.dst_desc(), engine);
  dnnl::reorder(user_w, weights).execute(stream, user_w, weights);
  const dnnl::reorder to_src(user_src, src), to_nchw(dst, user_dst);
  const dnnl::convolution_forward primitive(pd);
  auto run_conv = [&] {
    primitive.execute(stream,
                      {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}});
    stream.wait();
  };
  auto run_with_reorders = [&] {
    to_src.execute(stream, user_src, src);
    primitive.execute(stream,
                      {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}});
    to_nchw.execute(stream, dst, user_dst);
    stream.wait();
  };
  run_with_reorders();
  r.dnnl_error = difference(expected, y_nchw);
  variants.push_back(run_conv);
  variants.push_back(run_with_reorders);

  // XNNPACK: NHWC input and output, weights [M, kh, kw, Cg]; one thread.
  xnn_operator_t op = nullptr;
  std::vector<float> x_nhwc, y_nhwc;
  if (o.threads == 1) {
    std::vector<float> w_ohwi(w.size());
    x_nhwc.resize(x.size());
    y_nhwc.resize(expected.size());
    for (int64_t c = 0; c < s.channels; ++c)
      for (int64_t i = 0; i < s.height * s.width; ++i)
        x_nhwc[static_cast<std::size_t>(i * s.channels + c)] = x[static_cast<std::size_t>(c * s.height * s.width + i)];
    const int64_t taps = s.kernel * s.kernel;
    for (int64_t m = 0; m < s.out_channels; ++m)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t t = 0; t < taps; ++t)
          w_ohwi[static_cast<std::size_t>((m * taps + t) * cg + c)] =
              w[static_cast<std::size_t>((m * cg + c) * taps + t)];
    const auto pad = static_cast<uint32_t>(s.pad), k = static_cast<uint32_t>(s.kernel);
    const auto st = static_cast<uint32_t>(s.stride);
    if (xnn_create_convolution2d_nhwc_f32(pad, pad, pad, pad, k, k, st, st, 1, 1, static_cast<uint32_t>(s.group),
                                          static_cast<std::size_t>(cg), static_cast<std::size_t>(mg),
                                          static_cast<std::size_t>(s.channels),
                                          static_cast<std::size_t>(s.out_channels), w_ohwi.data(), b.data(), -INFINITY,
                                          INFINITY, 0, &op) == xnn_status_success &&
        xnn_setup_convolution2d_nhwc_f32(op, 1, static_cast<std::size_t>(s.height), static_cast<std::size_t>(s.width),
                                         x_nhwc.data(), y_nhwc.data(), nullptr) == xnn_status_success) {
      xnn_run_operator(op, nullptr);
      std::vector<float> y(expected.size());
      for (int64_t m = 0; m < s.out_channels; ++m)
        for (int64_t i = 0; i < oh * ow; ++i)
          y[static_cast<std::size_t>(m * oh * ow + i)] = y_nhwc[static_cast<std::size_t>(i * s.out_channels + m)];
      r.xnnpack_error = difference(expected, y);
      variants.push_back([&] { xnn_run_operator(op, nullptr); });
    }
  }
  const std::vector<Timing> t = time_interleaved(o, variants);
  r.engine = t[0];
  r.dnnl = t[1];
  r.dnnl_nchw = t[2];
  if (t.size() > 3) r.xnnpack = t[3];
  if (op != nullptr) xnn_delete_operator(op);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (value <= 0 || (flag != "--threads" && flag != "--runs" && flag != "--warmup")) {
      fmt::print(stderr, "conv_libraries: usage: conv_libraries [--threads N] [--runs R] [--warmup W]\n");
      return 2;
    }
    (flag == "--threads" ? o.threads : flag == "--runs" ? o.runs : o.warmup) = value;
  }
  if (argc % 2 == 0) {
    fmt::print(stderr, "conv_libraries: '{}' has no value\n", argv[argc - 1]);
    return 2;
  }
  if (xnn_initialize(nullptr) != xnn_status_success) {
    fmt::print(stderr, "conv_libraries: XNNPACK does not support this CPU\n");
  }
  fmt::print("threads {} ({}), {} interleaved runs: the engine's median and best ms; per library the ratio library / "
             "engine of the medians and of the best runs (below 1: the library is faster)\n",
             o.threads, o.threads == 1 ? "the calling thread's CPU time" : "wall clock", o.runs);
  fmt::print("{:<26} {:>8} {:>8} | {:>6} {:>6} | {:>6} {:>6} | {:>6} {:>6} | {}\n", "conv", "median", "best", "dnnl",
             "best", "+nchw", "best", "xnnpk", "best", "max rel. difference dnnl / xnnpack");
  Result total;
  auto add = [](Timing& sum, const Timing& t) {
    sum.median += t.median;
    sum.best += t.best;
  };
  auto print_row = [](const char* name, const Result& r) {
    fmt::print("{:<26} {:8.3f} {:8.3f} | {:6.2f} {:6.2f} | {:6.2f} {:6.2f} | ", name, r.engine.median, r.engine.best,
               r.dnnl.median / r.engine.median, r.dnnl.best / r.engine.best, r.dnnl_nchw.median / r.engine.median,
               r.dnnl_nchw.best / r.engine.best);
    if (r.xnnpack.median > 0) {
      fmt::print("{:6.2f} {:6.2f} | ", r.xnnpack.median / r.engine.median, r.xnnpack.best / r.engine.best);
    } else {
      fmt::print("{:>6} {:>6} | ", "-", "-");
    }
  };
  for (const Shape& s : shapes) {
    const Result r = measure(s, o);
    add(total.engine, r.engine);
    add(total.dnnl, r.dnnl);
    add(total.dnnl_nchw, r.dnnl_nchw);
    add(total.xnnpack, r.xnnpack);
    print_row(s.name, r);
    if (r.xnnpack.median > 0) {
      fmt::print("{:.1e} / {:.1e}\n", r.dnnl_error, r.xnnpack_error);
    } else {
      fmt::print("{:.1e}\n", r.dnnl_error);
    }
  }
  print_row("sum", total);
  fmt::print("\n");
  return 0;
}
