// What rknnxx costs per inference over the raw C calls, on the same model, runtime and input.
//
//   binding_overhead MODEL.hrknn [ROUNDS] [ITERATIONS]   (RKNNXX_RUNTIME=host on a PC)
//
// The two dynamic-shape flows (docs/c-interface.md), each written twice: once as raw C calls through the loaded runtime's
// function table (what an application without rknnxx does), once with rknnxx:
//   general    rknn_inputs_set + rknn_run + rknn_outputs_get(want_float) + rknn_outputs_release
//              vs ctx.set_inputs(view) + ctx.run() + ctx.outputs()
//   zero-copy  w_stride row copy + rknn_mem_sync + rknn_run + rknn_mem_sync + read
//              vs io.write(view) + io.run() + io.output<float>()
// The two sides alternate in rounds of ITERATIONS inferences on two contexts of the same model;
// the median per-inference time of each side over the rounds is printed, and their ratio
// (rknnxx / raw: 1.00 means no measurable cost). The smallest shape of the model's set is used,
// so that the per-call work of the library is as large a share of an inference as it gets.
#include <rknnxx/rknn.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void check(int rc, const char* call) {
  if (rc < 0) throw rknnxx::Error(static_cast<rknnxx::Errc>(rc), call, "raw C flow");
}

template <class F> double time_per_call(int iterations, F&& f) {
  const auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) f();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iterations;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    fmt::print(stderr, "usage: {} MODEL.hrknn [ROUNDS] [ITERATIONS]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 20;
  using namespace rknnxx;

  auto ctx = Context::from_file(argv[1]);
  const ApiTable& api = ctx.runtime().api();
  const std::size_t smallest = ctx.shape_set() ? ctx.shape_set()->num_shapes() - 1 : 0;
  std::vector<float> sink(2, 0.0f);

  // ---- the raw C side, on its own context ----
  rknn_context raw = 0;
  check(api.rknn_init(&raw, argv[1], 0, 0, nullptr), "rknn_init");
  rknn_tensor_attr in_attr{};
  check(api.rknn_query(raw, RKNN_QUERY_INPUT_ATTR, &in_attr, sizeof in_attr), "rknn_query");
  rknn_tensor_attr out_attr{};
  check(api.rknn_query(raw, RKNN_QUERY_OUTPUT_ATTR, &out_attr, sizeof out_attr), "rknn_query");
  rknn_input_output_num io_num{};
  check(api.rknn_query(raw, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof io_num), "rknn_query");
  if (ctx.shape_set()) {
    rknn_tensor_attr shape_attr = in_attr;
    ctx.shape_set()->fill_input_attrs(smallest, std::span<rknn_tensor_attr>(&shape_attr, 1));
    check(api.rknn_set_input_shapes(raw, 1, &shape_attr), "rknn_set_input_shapes");
  }
  rknn_tensor_attr cur_in{};
  check(api.rknn_query(raw, RKNN_QUERY_CURRENT_INPUT_ATTR, &cur_in, sizeof cur_in), "rknn_query");
  const std::uint32_t h = cur_in.dims[1], w = cur_in.dims[2], c = cur_in.dims[3];
  std::vector<std::uint8_t> image(std::size_t{h} * w * c);
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::uint8_t>(i * 31);
  fmt::print("model {}: input {}x{}x{} (w_stride {}), {} outputs, runtime {}\n", argv[1], h, w, c, cur_in.w_stride,
             io_num.n_output, ctx.runtime().path());

  // ---- the rknnxx side ----
  ctx.set_input_shapes(smallest);
  const auto view = nhwc_view(image.data(), {.n = 1, .c = c, .h = h, .w = w});

  // General API.
  auto raw_general = [&] {
    rknn_input input{};
    input.index = 0;
    input.buf = image.data();
    input.size = static_cast<std::uint32_t>(image.size());
    input.type = RKNN_TENSOR_UINT8;
    input.fmt = RKNN_TENSOR_NHWC;
    check(api.rknn_inputs_set(raw, 1, &input), "rknn_inputs_set");
    check(api.rknn_run(raw, nullptr), "rknn_run");
    std::vector<rknn_output> outputs(io_num.n_output);
    for (std::uint32_t i = 0; i < io_num.n_output; ++i) {
      outputs[i].index = i;
      outputs[i].want_float = 1;
    }
    check(api.rknn_outputs_get(raw, io_num.n_output, outputs.data(), nullptr), "rknn_outputs_get");
    sink[0] += static_cast<const float*>(outputs[0].buf)[0];
    check(api.rknn_outputs_release(raw, io_num.n_output, outputs.data()), "rknn_outputs_release");
  };
  auto lib_general = [&] {
    ctx.set_inputs(view);
    ctx.run();
    const auto out = ctx.outputs();
    sink[1] += out[0].as<float>()[0];
  };

  // Zero-copy, on second contexts (bound memory would take precedence over rknn_inputs_set).
  rknn_context raw_zc = 0;
  check(api.rknn_init(&raw_zc, argv[1], 0, 0, nullptr), "rknn_init");
  rknn_tensor_attr zc_in = in_attr;
  zc_in.type = RKNN_TENSOR_UINT8;
  zc_in.fmt = RKNN_TENSOR_NHWC;
  rknn_tensor_mem* in_mem = api.rknn_create_mem(raw_zc, zc_in.size_with_stride);
  std::vector<rknn_tensor_mem*> out_mems;
  std::vector<rknn_tensor_attr> out_attrs(io_num.n_output);
  if (ctx.shape_set()) {
    rknn_tensor_attr shape_attr = in_attr;
    ctx.shape_set()->fill_input_attrs(smallest, std::span<rknn_tensor_attr>(&shape_attr, 1));
    check(api.rknn_set_input_shapes(raw_zc, 1, &shape_attr), "rknn_set_input_shapes");
  }
  rknn_tensor_attr zc_cur{};
  check(api.rknn_query(raw_zc, RKNN_QUERY_CURRENT_INPUT_ATTR, &zc_cur, sizeof zc_cur), "rknn_query");
  zc_cur.type = RKNN_TENSOR_UINT8;
  check(api.rknn_set_io_mem(raw_zc, in_mem, &zc_cur), "rknn_set_io_mem");
  for (std::uint32_t i = 0; i < io_num.n_output; ++i) {
    rknn_tensor_attr a{};
    a.index = i;
    check(api.rknn_query(raw_zc, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof a), "rknn_query");
    out_mems.push_back(api.rknn_create_mem(raw_zc, a.n_elems * sizeof(float)));
    out_attrs[i].index = i;
    check(api.rknn_query(raw_zc, RKNN_QUERY_CURRENT_OUTPUT_ATTR, &out_attrs[i], sizeof out_attrs[i]), "rknn_query");
    out_attrs[i].type = RKNN_TENSOR_FLOAT32;
    if (out_attrs[i].n_dims == 4) out_attrs[i].fmt = RKNN_TENSOR_NCHW;
    check(api.rknn_set_io_mem(raw_zc, out_mems[i], &out_attrs[i]), "rknn_set_io_mem");
  }
  auto raw_zero_copy = [&] {
    const std::uint32_t stride = zc_cur.w_stride;
    auto* dst = static_cast<std::uint8_t*>(in_mem->virt_addr);
    if (stride == w) {
      std::memcpy(dst, image.data(), image.size());
    } else {
      for (std::uint32_t y = 0; y < h; ++y)
        std::memcpy(dst + std::size_t{y} * stride * c, image.data() + std::size_t{y} * w * c, std::size_t{w} * c);
    }
    check(api.rknn_mem_sync(raw_zc, in_mem, RKNN_MEMORY_SYNC_TO_DEVICE), "rknn_mem_sync");
    check(api.rknn_run(raw_zc, nullptr), "rknn_run");
    check(api.rknn_mem_sync(raw_zc, out_mems[0], RKNN_MEMORY_SYNC_FROM_DEVICE), "rknn_mem_sync");
    sink[0] += static_cast<const float*>(out_mems[0]->virt_addr)[0];
  };
  auto zc_ctx = Context::from_file(argv[1]);
  IoBinding io(zc_ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc),
               BindAs::type(TensorType::float32, TensorFormat::nchw));
  io.set_input_shapes(smallest);
  auto lib_zero_copy = [&] {
    io.write(0, view);
    io.run();
    sink[1] += io.output<float>(0)[0];
  };

  for (int i = 0; i < 3; ++i) {  // warm up both sides
    raw_general();
    lib_general();
    raw_zero_copy();
    lib_zero_copy();
  }
  std::vector<double> rg, lg, rz, lz;
  for (int r = 0; r < rounds; ++r) {
    rg.push_back(time_per_call(iterations, raw_general));
    lg.push_back(time_per_call(iterations, lib_general));
    rz.push_back(time_per_call(iterations, raw_zero_copy));
    lz.push_back(time_per_call(iterations, lib_zero_copy));
  }
  const double g_raw = median(rg), g_lib = median(lg), z_raw = median(rz), z_lib = median(lz);
  fmt::print("general API: raw C {:.1f} us, rknnxx {:.1f} us per inference, ratio {:.3f}\n", g_raw, g_lib,
             g_lib / g_raw);
  fmt::print("zero-copy:   raw C {:.1f} us, rknnxx {:.1f} us per inference, ratio {:.3f}\n", z_raw, z_lib,
             z_lib / z_raw);
  fmt::print("(medians of {} rounds of {} inferences; outputs agree: {})\n", rounds, iterations, sink[0] == sink[1]);

  for (auto* m : out_mems) check(api.rknn_destroy_mem(raw_zc, m), "rknn_destroy_mem");
  check(api.rknn_destroy_mem(raw_zc, in_mem), "rknn_destroy_mem");
  check(api.rknn_destroy(raw_zc), "rknn_destroy");
  check(api.rknn_destroy(raw), "rknn_destroy");
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "error: {}\n", e.what());
  return 1;
}
