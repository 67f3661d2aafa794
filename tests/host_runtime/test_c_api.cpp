// The host runtime through its exported C interface: board-exact attributes, the general and
// zero-copy flows against the engine run directly, dynamic shapes, and every kind of misuse
// answered with the vendor's return code instead of a crash.

#include "converted_models.hpp"

#include <rknnxx/abi/c_api.h>

#include "engine/session.hpp"
#include "engine/float16.hpp"
#include "engine/onnx_reader.hpp"
#include "convert/model_file.hpp"

#include "c_api_test_helpers.hpp"
#include "scratch_dir.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace rknnxx;
using test::Ctx;
using test::dims_of;
using test::query_attr;

namespace {

std::vector<uint8_t> image(uint32_t h, uint32_t w, uint32_t c, uint32_t seed = 1) {
  std::vector<uint8_t> img(size_t{h} * w * c);
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<uint8_t>((i * 37 + seed * 101 + (i / c) % 7) % 256);
  return img;
}

int set_image(rknn_context ctx, std::vector<uint8_t>& img) {
  rknn_input in{};
  in.index = 0;
  in.type = RKNN_TENSOR_UINT8;
  in.fmt = RKNN_TENSOR_NHWC;
  in.buf = img.data();
  in.size = static_cast<uint32_t>(img.size());
  return rknn_inputs_set(ctx, 1, &in);
}

std::vector<float> get_float_output(rknn_context ctx, uint32_t index) {
  // outputs_get takes the first n outputs; ask for all up to index.
  std::vector<rknn_output> outs(index + 1);
  for (uint32_t i = 0; i <= index; ++i) {
    outs[i].index = i;
    outs[i].want_float = 1;
  }
  REQUIRE(rknn_outputs_get(ctx, index + 1, outs.data(), nullptr) == RKNN_SUCC);
  const auto* values = static_cast<const float*>(outs[index].buf);
  std::vector<float> result(values, values + outs[index].size / sizeof(float));
  REQUIRE(rknn_outputs_release(ctx, index + 1, outs.data()) == RKNN_SUCC);
  return result;
}

// What the engine computes for this image when run directly: the same normalisation and
// float16 rounding the runtime promises, with no runtime in between.
std::vector<float> engine_reference(const std::vector<uint8_t>& img, uint32_t h, uint32_t w, size_t output) {
  const auto onnx = test::read_bytes(test::models_dir() / "dyn/dyncnn.onnx");
  host::Session session(host::onnx::read_model(onnx), {.threads = 1, .float16_activations = true});
  const float mean[3] = {123.675f, 116.28f, 103.53f}, std_[3] = {58.395f, 57.12f, 57.375f};
  host::Tensor input(host::DataType::float32, {1, 3, h, w});
  float* x = input.data<float>();
  for (uint32_t c = 0; c < 3; ++c)
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t xx = 0; xx < w; ++xx)
        x[(c * h + y) * w + xx] = host::round_to_half(
            static_cast<float>((static_cast<double>(img[(y * w + xx) * 3 + c]) - mean[c]) / std_[c]));
  auto outputs = session.run(std::vector<host::Tensor>{std::move(input)});
  std::vector<float> values(outputs[output].values<float>().begin(), outputs[output].values<float>().end());
  for (float& v : values) v = host::round_to_half(v);
  return values;
}

float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

}  // namespace

TEST_CASE("attributes are reported as on the board") {
  Ctx ctx(test::dyncnn());
  rknn_input_output_num io{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof io) == RKNN_SUCC);
  CHECK(io.n_input == 1);
  CHECK(io.n_output == 2);

  SUBCASE("4-D inputs are NHWC, float models float16, the largest shape first") {
    const auto in = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
    CHECK(std::string(in.name) == "data");
    CHECK(in.fmt == RKNN_TENSOR_NHWC);
    CHECK(in.type == RKNN_TENSOR_FLOAT16);
    CHECK(dims_of(in) == std::vector<uint32_t>{1, 224, 224, 3});
    CHECK(in.n_elems == 224u * 224 * 3);
    CHECK(in.size == in.n_elems * 2);
    CHECK(in.w_stride == 224);
    CHECK(in.size_with_stride == in.size);
  }
  SUBCASE("outputs are NCHW normally and NC1HWC2 natively, with the platform's C2") {
    const auto normal = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 1);
    CHECK(normal.fmt == RKNN_TENSOR_NCHW);
    CHECK(dims_of(normal) == std::vector<uint32_t>{1, 32, 56, 56});
    const auto native = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 1);
    CHECK(native.fmt == RKNN_TENSOR_NC1HWC2);
    CHECK(dims_of(native) == std::vector<uint32_t>{1, 4, 56, 56, 8});  // RK3588 float16: C2 = 8
    CHECK(native.size_with_stride == 1u * 4 * 56 * 56 * 8 * 2);
    const auto logits = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
    CHECK(logits.fmt == RKNN_TENSOR_UNDEFINED);
    CHECK(dims_of(logits) == std::vector<uint32_t>{1, 10});
  }
  SUBCASE("RK3566 has C2 4 for float16 and aligns input rows to 8 pixels") {
    Ctx rk3566(test::dyncnn("rk3566"));
    const auto native = query_attr(rk3566, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 1);
    CHECK(dims_of(native) == std::vector<uint32_t>{1, 8, 56, 56, 4});
  }
  SUBCASE("SDK version, custom string and memory sizes") {
    rknn_sdk_version version{};
    REQUIRE(rknn_query(ctx, RKNN_QUERY_SDK_VERSION, &version, sizeof version) == RKNN_SUCC);
    CHECK(std::string(version.api_version).find("rknnxx host runtime") != std::string::npos);
    CHECK(std::string(version.api_version).find("2.3.2") != std::string::npos);
    rknn_custom_string custom{};
    REQUIRE(rknn_query(ctx, RKNN_QUERY_CUSTOM_STRING, &custom, sizeof custom) == RKNN_SUCC);
    CHECK(std::string(custom.string) == "dyncnn for tests");
    rknn_mem_size mem{};
    REQUIRE(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &mem, sizeof mem) == RKNN_SUCC);
    CHECK(mem.total_weight_size > 0);
    CHECK(mem.total_internal_size > 0);
  }
}

TEST_CASE("dynamic shapes follow docs/c-interface.md") {
  Ctx ctx(test::dyncnn());
  rknn_input_range range{};
  range.index = 0;
  REQUIRE(rknn_query(ctx, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof range) == RKNN_SUCC);
  CHECK(range.shape_number == 3);
  CHECK(range.fmt == RKNN_TENSOR_NHWC);
  CHECK(range.n_dims == 4);
  CHECK(std::vector<uint32_t>(range.dyn_range[2], range.dyn_range[2] + 4) == std::vector<uint32_t>{1, 100, 100, 3});

  auto attr = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
  SUBCASE("setting a shape of the set changes the current attributes") {
    attr.dims[1] = attr.dims[2] = 100;
    REQUIRE(rknn_set_input_shapes(ctx, 1, &attr) == RKNN_SUCC);
    const auto current = query_attr(ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0);
    CHECK(dims_of(current) == std::vector<uint32_t>{1, 100, 100, 3});
    CHECK(current.w_stride == 112);  // RK3588 aligns zero-copy rows to 16 pixels
    CHECK(current.size_with_stride == 112u * 100 * 3 * 2);
    CHECK(dims_of(query_attr(ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, 1)) == std::vector<uint32_t>{1, 32, 25, 25});
    // The plain query keeps reporting the largest shape.
    CHECK(dims_of(query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0)) == std::vector<uint32_t>{1, 224, 224, 3});
  }
  SUBCASE("a shape outside the set is refused") {
    attr.dims[1] = attr.dims[2] = 128;
    CHECK(rknn_set_input_shapes(ctx, 1, &attr) == RKNN_ERR_FAIL);
  }
  SUBCASE("NCHW dims labelled NHWC are refused") {
    attr.dims[1] = 3;
    attr.dims[2] = attr.dims[3] = 160;
    CHECK(rknn_set_input_shapes(ctx, 1, &attr) == RKNN_ERR_FAIL);
  }
  SUBCASE("4-D shapes must say NHWC") {
    attr.fmt = RKNN_TENSOR_NCHW;
    CHECK(rknn_set_input_shapes(ctx, 1, &attr) == RKNN_ERR_PARAM_INVALID);
  }
  SUBCASE("a static model answers the range query as the board does") {
    Ctx fixed(test::squeezenet());
    rknn_input_range r{};
    CHECK(rknn_query(fixed, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &r, sizeof r) == RKNN_ERR_MODEL_INVALID);
  }
}

TEST_CASE("general and zero-copy flows agree with the engine run directly, for every shape") {
  Ctx ctx(test::dyncnn());
  auto attr = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
  rknn_tensor_mem* in_mem = rknn_create_mem(ctx, attr.size_with_stride);
  rknn_tensor_mem* out_mem = rknn_create_mem(ctx, query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 1).n_elems * 4);
  REQUIRE(in_mem != nullptr);
  REQUIRE(out_mem != nullptr);
  for (uint32_t side : {224u, 160u, 100u}) {
    CAPTURE(side);
    attr.dims[1] = attr.dims[2] = side;
    REQUIRE(rknn_set_input_shapes(ctx, 1, &attr) == RKNN_SUCC);
    auto img = image(side, side, 3, side);
    const auto reference = engine_reference(img, side, side, 1);

    // Zero-copy first: it binds memory for the current shape, which the general flow's run
    // then writes as well (a binding from an older shape would be refused).
    auto cur_in = query_attr(ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0);
    auto* dst = static_cast<uint8_t*>(in_mem->virt_addr);
    for (uint32_t h = 0; h < side; ++h)
      std::memcpy(dst + size_t{h} * cur_in.w_stride * 3, img.data() + size_t{h} * side * 3, side * 3);
    cur_in.type = RKNN_TENSOR_UINT8;
    REQUIRE(rknn_set_io_mem(ctx, in_mem, &cur_in) == RKNN_SUCC);
    auto cur_out = query_attr(ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, 1);
    cur_out.type = RKNN_TENSOR_FLOAT32;
    REQUIRE(rknn_set_io_mem(ctx, out_mem, &cur_out) == RKNN_SUCC);
    REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
    const auto* zc = static_cast<const float*>(out_mem->virt_addr);
    CHECK(max_abs_difference(std::vector<float>(zc, zc + reference.size()), reference) == 0.0f);

    REQUIRE(set_image(ctx, img) == RKNN_SUCC);
    REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
    CHECK(max_abs_difference(get_float_output(ctx, 1), reference) == 0.0f);
  }
  CHECK(rknn_destroy_mem(ctx, in_mem) == RKNN_SUCC);
  CHECK(rknn_destroy_mem(ctx, out_mem) == RKNN_SUCC);
}

TEST_CASE("internal memory from outside holds the intermediates, shared by contexts run in turn") {
  // The board's order (dynamic-shape alloc-outside demo): size the memory on a dummy context.
  rknn_mem_size sizes{};
  {
    Ctx info(test::dyncnn(), RKNN_FLAG_COLLECT_MODEL_INFO_ONLY | RKNN_FLAG_MEM_ALLOC_OUTSIDE);
    REQUIRE(rknn_query(info, RKNN_QUERY_MEM_SIZE, &sizes, sizeof sizes) == RKNN_SUCC);
  }
  REQUIRE(sizes.total_internal_size > 0);
  Ctx a(test::dyncnn(), RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE);
  Ctx b(test::dyncnn(), RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE);
  rknn_mem_size own{};
  REQUIRE(rknn_query(a, RKNN_QUERY_MEM_SIZE, &own, sizeof own) == RKNN_SUCC);
  CHECK(own.total_internal_size == sizes.total_internal_size);

  auto attr = query_attr(a, RKNN_QUERY_INPUT_ATTR, 0);
  auto img = image(224, 224, 3);
  REQUIRE(set_image(a, img) == RKNN_SUCC);
  CHECK(rknn_run(a, nullptr) == RKNN_ERR_FAIL);  // no internal memory yet

  rknn_tensor_mem* internal = rknn_create_mem(a, sizes.total_internal_size);
  REQUIRE(internal != nullptr);
  std::memset(internal->virt_addr, 0xAB, internal->size);
  // the same memory, seen from b through its fd (rknn_internal_mem_reuse_demo)
  rknn_tensor_mem* shared = rknn_create_mem_from_fd(b, internal->fd, internal->virt_addr, internal->size, 0);
  REQUIRE(shared != nullptr);
  REQUIRE(rknn_set_internal_mem(a, internal) == RKNN_SUCC);
  REQUIRE(rknn_set_internal_mem(b, shared) == RKNN_SUCC);

  REQUIRE(rknn_run(a, nullptr) == RKNN_SUCC);
  const auto* bytes = static_cast<const uint8_t*>(internal->virt_addr);
  CHECK(std::count(bytes, bytes + internal->size, uint8_t{0xAB}) < static_cast<std::ptrdiff_t>(internal->size / 2));
  CHECK(max_abs_difference(get_float_output(a, 1), engine_reference(img, 224, 224, 1)) == 0.0f);

  // b runs every shape of the set in the same bytes, a keeps giving its own results
  for (uint32_t side : {100u, 160u, 224u}) {
    CAPTURE(side);
    attr.dims[1] = attr.dims[2] = side;
    REQUIRE(rknn_set_input_shapes(b, 1, &attr) == RKNN_SUCC);
    auto small = image(side, side, 3, side);
    REQUIRE(set_image(b, small) == RKNN_SUCC);
    REQUIRE(rknn_run(b, nullptr) == RKNN_SUCC);
    CHECK(max_abs_difference(get_float_output(b, 1), engine_reference(small, side, side, 1)) == 0.0f);
    REQUIRE(rknn_run(a, nullptr) == RKNN_SUCC);
    CHECK(max_abs_difference(get_float_output(a, 1), engine_reference(img, 224, 224, 1)) == 0.0f);
  }

  SUBCASE("too small, misaligned or destroyed memory is refused") {
    rknn_tensor_mem* small = rknn_create_mem(a, sizes.total_internal_size - 64);
    CHECK(rknn_set_internal_mem(a, small) == RKNN_ERR_PARAM_INVALID);
    rknn_tensor_mem* skewed = rknn_create_mem_from_fd(a, internal->fd, internal->virt_addr, internal->size - 8, 8);
    REQUIRE(skewed != nullptr);
    CHECK(rknn_set_internal_mem(a, skewed) == RKNN_ERR_PARAM_INVALID);
    CHECK(rknn_destroy_mem(a, skewed) == RKNN_SUCC);
    CHECK(rknn_destroy_mem(a, small) == RKNN_SUCC);
    CHECK(rknn_destroy_mem(b, shared) == RKNN_SUCC);
    CHECK(rknn_run(b, nullptr) == RKNN_ERR_PARAM_INVALID);  // names the destroyed internal memory
    REQUIRE(rknn_run(a, nullptr) == RKNN_SUCC);             // a's own binding is still alive
    shared = nullptr;
  }
  if (shared != nullptr) CHECK(rknn_destroy_mem(b, shared) == RKNN_SUCC);
  CHECK(rknn_destroy_mem(a, internal) == RKNN_SUCC);
}

TEST_CASE("weight memory from outside holds the weights the engine reads") {
  Ctx ctx(test::dyncnn(), RKNN_FLAG_MEM_ALLOC_OUTSIDE);
  rknn_mem_size sizes{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &sizes, sizeof sizes) == RKNN_SUCC);
  REQUIRE(sizes.total_weight_size > 0);
  auto img = image(224, 224, 3);
  const auto reference = engine_reference(img, 224, 224, 1);
  REQUIRE(set_image(ctx, img) == RKNN_SUCC);

  rknn_tensor_mem* internal = rknn_create_mem(ctx, sizes.total_internal_size);
  rknn_tensor_mem* weights = rknn_create_mem(ctx, sizes.total_weight_size);
  REQUIRE(internal != nullptr);
  REQUIRE(weights != nullptr);
  REQUIRE(rknn_set_internal_mem(ctx, internal) == RKNN_SUCC);
  CHECK(rknn_run(ctx, nullptr) == RKNN_ERR_FAIL);  // MEM_ALLOC_OUTSIDE: weights first
  rknn_tensor_mem* small = rknn_create_mem(ctx, sizes.total_weight_size - 1);
  CHECK(rknn_set_weight_mem(ctx, small) == RKNN_ERR_PARAM_INVALID);
  CHECK(rknn_destroy_mem(ctx, small) == RKNN_SUCC);

  REQUIRE(rknn_set_weight_mem(ctx, weights) == RKNN_SUCC);
  const auto* bytes = static_cast<const uint8_t*>(weights->virt_addr);
  CHECK(std::count(bytes, bytes + weights->size, uint8_t{0}) < static_cast<std::ptrdiff_t>(weights->size / 2));
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);  // the input set before still holds
  CHECK(max_abs_difference(get_float_output(ctx, 1), reference) == 0.0f);

  // The engine reads the caller's bytes: cleared weights give other results.
  std::memset(weights->virt_addr, 0, weights->size);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  CHECK(max_abs_difference(get_float_output(ctx, 1), reference) > 0.0f);

  // Destroyed weight memory is refused; new memory gets the model's weights again.
  CHECK(rknn_destroy_mem(ctx, weights) == RKNN_SUCC);
  CHECK(rknn_run(ctx, nullptr) == RKNN_ERR_PARAM_INVALID);
  weights = rknn_create_mem(ctx, sizes.total_weight_size);
  REQUIRE(rknn_set_weight_mem(ctx, weights) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  CHECK(max_abs_difference(get_float_output(ctx, 1), reference) == 0.0f);
  CHECK(rknn_destroy_mem(ctx, weights) == RKNN_SUCC);
  CHECK(rknn_destroy_mem(ctx, internal) == RKNN_SUCC);
}

TEST_CASE("native NC1HWC2 output memory holds the blocked output, padding lanes zero") {
  Ctx ctx(test::dyncnn("rk3566"));  // C2 4 for float16
  auto img = image(224, 224, 3);
  REQUIRE(set_image(ctx, img) == RKNN_SUCC);
  auto native = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 1);
  rknn_tensor_mem* mem = rknn_create_mem(ctx, native.size_with_stride);
  REQUIRE(rknn_set_io_mem(ctx, mem, &native) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  const auto normal = get_float_output(ctx, 1);  // [1,32,56,56]
  const auto* blocked = static_cast<const uint16_t*>(mem->virt_addr);
  const uint32_t c2 = native.dims[4], h = native.dims[2], w = native.dims[3];
  int mismatches = 0;
  for (uint32_t c = 0; c < 32; ++c)
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x) {
        const size_t at = ((size_t{c / c2} * h + y) * w + x) * c2 + c % c2;
        if (host::half_bits_to_float(blocked[at]) != normal[(size_t{c} * h + y) * w + x]) ++mismatches;
      }
  CHECK(mismatches == 0);
  CHECK(rknn_destroy_mem(ctx, mem) == RKNN_SUCC);
}

TEST_CASE("cache sync is emulated: without mem_sync the NPU sees stale memory") {
  Ctx ctx(test::dyncnn(), RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE);
  auto attr = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
  attr.type = RKNN_TENSOR_UINT8;
  rknn_tensor_mem* mem = rknn_create_mem(ctx, attr.size_with_stride);
  auto img = image(224, 224, 3);
  std::memcpy(mem->virt_addr, img.data(), img.size());
  REQUIRE(rknn_set_io_mem(ctx, mem, &attr) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  const auto stale = get_float_output(ctx, 0);
  REQUIRE(rknn_mem_sync(ctx, mem, RKNN_MEMORY_SYNC_TO_DEVICE) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  const auto fresh = get_float_output(ctx, 0);
  CHECK(max_abs_difference(fresh, engine_reference(img, 224, 224, 0)) == 0.0f);
  CHECK(max_abs_difference(stale, fresh) > 0.0f);
  CHECK(rknn_destroy_mem(ctx, mem) == RKNN_SUCC);
}

TEST_CASE("perf queries: the run's time, and a per-layer table with RKNN_FLAG_COLLECT_PERF_MASK") {
  Ctx ctx(test::dyncnn(), RKNN_FLAG_COLLECT_PERF_MASK);
  auto img = image(224, 224, 3);
  REQUIRE(set_image(ctx, img) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  rknn_perf_run run{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_PERF_RUN, &run, sizeof run) == RKNN_SUCC);
  CHECK(run.run_duration > 0);
  rknn_perf_detail detail{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof detail) == RKNN_SUCC);
  REQUIRE(detail.perf_data != nullptr);
  const std::string table(detail.perf_data, detail.data_len);
  CHECK(table.find("Conv") != std::string::npos);
  CHECK(table.find("Gemm") != std::string::npos);
  CHECK(table.find("Total operator time") != std::string::npos);
  CHECK(std::count(table.begin(), table.end(), '\n') >= 5);  // a header, a line a layer, a total
}

TEST_CASE("memory without a context: rknn_create_mem2 with RKNN_MEM_FLAG_ALLOC_NO_CONTEXT") {
  rknn_tensor_mem* mem = rknn_create_mem2(0, 4096, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  REQUIRE(mem != nullptr);
  CHECK(mem->fd >= 0);  // a real descriptor (memfd), as a dma-buf fd on a board
  CHECK(mem->size == 4096);
  CHECK(rknn_mem_sync(0, mem, RKNN_MEMORY_SYNC_TO_DEVICE) == RKNN_SUCC);
  CHECK(rknn_mem_sync(0, mem, static_cast<rknn_mem_sync_mode>(9)) == RKNN_ERR_PARAM_INVALID);
  CHECK(rknn_destroy_mem(0, mem) == RKNN_SUCC);
  CHECK(rknn_create_mem2(0, 4096, 0) == nullptr);  // without the flag it needs a live context
}

TEST_CASE("rknn_destroy frees outputs the caller never released") {
  // LeakSanitizer in the sanitizer build turns a leak here into a failure.
  rknn_context c = 0;
  REQUIRE(rknn_init(&c, const_cast<char*>(test::dyncnn().c_str()), 0, 0, nullptr) == RKNN_SUCC);
  auto img = image(224, 224, 3);
  REQUIRE(set_image(c, img) == RKNN_SUCC);
  REQUIRE(rknn_run(c, nullptr) == RKNN_SUCC);
  rknn_output out{};
  out.want_float = 1;
  REQUIRE(rknn_outputs_get(c, 1, &out, nullptr) == RKNN_SUCC);
  CHECK(out.buf != nullptr);
  CHECK(rknn_destroy(c) == RKNN_SUCC);
}

TEST_CASE("misuse gets the vendor's return codes, never a crash") {
  Ctx ctx(test::dyncnn());
  SUBCASE("bad model files") {
    rknn_context c = 0;
    CHECK(rknn_init(&c, const_cast<char*>("/nonexistent/model.hrknn"), 0, 0, nullptr) == RKNN_ERR_MODEL_INVALID);
    auto bytes = test::read_bytes(test::dyncnn());
    CHECK(rknn_init(&c, bytes.data(), static_cast<uint32_t>(bytes.size() / 2), 0, nullptr) == RKNN_ERR_MODEL_INVALID);
    bytes[bytes.size() / 2] ^= std::byte{0x5a};
    CHECK(rknn_init(&c, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr) == RKNN_ERR_MODEL_INVALID);
    CHECK(rknn_init(nullptr, bytes.data(), 1, 0, nullptr) == RKNN_ERR_PARAM_INVALID);
    CHECK(c == 0);
  }
  SUBCASE("destroyed and made-up contexts") {
    rknn_context c = 0;
    REQUIRE(rknn_init(&c, const_cast<char*>(test::dyncnn().c_str()), 0, 0, nullptr) == RKNN_SUCC);
    REQUIRE(rknn_destroy(c) == RKNN_SUCC);
    rknn_input_output_num io{};
    CHECK(rknn_query(c, RKNN_QUERY_IN_OUT_NUM, &io, sizeof io) == RKNN_ERR_CTX_INVALID);
    CHECK(rknn_run(c, nullptr) == RKNN_ERR_CTX_INVALID);
    CHECK(rknn_destroy(c) == RKNN_ERR_CTX_INVALID);
    CHECK(rknn_run(0xdeadbeef, nullptr) == RKNN_ERR_CTX_INVALID);
  }
  SUBCASE("queries with a short struct, an index out of range, an unknown command") {
    rknn_tensor_attr attr{};
    CHECK(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &attr, 372) == RKNN_ERR_PARAM_INVALID);
    attr.index = 5;
    CHECK(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &attr, sizeof attr) == RKNN_ERR_PARAM_INVALID);
    CHECK(rknn_query(ctx, static_cast<rknn_query_cmd>(99), &attr, sizeof attr) == RKNN_ERR_PARAM_INVALID);
    CHECK(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, nullptr, sizeof attr) == RKNN_ERR_PARAM_INVALID);
  }
  SUBCASE("inputs of the wrong size, type or count") {
    auto img = image(224, 224, 3);
    rknn_input in{};
    in.index = 0;
    in.type = RKNN_TENSOR_FLOAT32;  // the classic: type left at 0 means FLOAT32, four times the bytes
    in.fmt = RKNN_TENSOR_NHWC;
    in.buf = img.data();
    in.size = static_cast<uint32_t>(img.size());
    CHECK(rknn_inputs_set(ctx, 1, &in) == RKNN_ERR_PARAM_INVALID);
    in.type = RKNN_TENSOR_INT64;
    in.size = static_cast<uint32_t>(img.size());
    CHECK(rknn_inputs_set(ctx, 1, &in) != RKNN_SUCC);
    in.type = RKNN_TENSOR_UINT8;
    CHECK(rknn_inputs_set(ctx, 2, &in) == RKNN_ERR_PARAM_INVALID);
    in.buf = nullptr;
    CHECK(rknn_inputs_set(ctx, 1, &in) == RKNN_ERR_PARAM_INVALID);
    in.buf = img.data();
    in.index = 3;
    CHECK(rknn_inputs_set(ctx, 1, &in) == RKNN_ERR_PARAM_INVALID);
  }
  SUBCASE("calls in the wrong order") {
    rknn_output out{};
    out.want_float = 1;
    CHECK(rknn_outputs_get(ctx, 1, &out, nullptr) == RKNN_ERR_OUTPUT_INVALID);
    CHECK(rknn_run(ctx, nullptr) == RKNN_ERR_INPUT_INVALID);  // no input given yet
    auto img = image(224, 224, 3);
    REQUIRE(set_image(ctx, img) == RKNN_SUCC);
    REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
    REQUIRE(rknn_outputs_get(ctx, 1, &out, nullptr) == RKNN_SUCC);
    rknn_output copy = out;
    REQUIRE(rknn_outputs_release(ctx, 1, &out) == RKNN_SUCC);
    CHECK(rknn_outputs_release(ctx, 1, &copy) == RKNN_ERR_PARAM_INVALID);  // released twice
  }
  SUBCASE("zero-copy memory too small, destroyed, or of another context") {
    auto attr = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
    attr.type = RKNN_TENSOR_UINT8;
    rknn_tensor_mem* small = rknn_create_mem(ctx, attr.size_with_stride / 2 - 1);  // uint8 needs half of float16
    CHECK(rknn_set_io_mem(ctx, small, &attr) == RKNN_ERR_PARAM_INVALID);
    CHECK(rknn_destroy_mem(ctx, small) == RKNN_SUCC);
    CHECK(rknn_destroy_mem(ctx, small) == RKNN_ERR_PARAM_INVALID);
    Ctx other(test::dyncnn());
    rknn_tensor_mem* foreign = rknn_create_mem(other, attr.size_with_stride);
    CHECK(rknn_set_io_mem(ctx, foreign, &attr) == RKNN_ERR_PARAM_INVALID);
    rknn_tensor_mem* mem = rknn_create_mem(ctx, attr.size_with_stride);
    REQUIRE(rknn_set_io_mem(ctx, mem, &attr) == RKNN_SUCC);
    REQUIRE(rknn_destroy_mem(ctx, mem) == RKNN_SUCC);
    CHECK(rknn_run(ctx, nullptr) == RKNN_ERR_PARAM_INVALID);  // the bound memory is gone
    CHECK(rknn_destroy_mem(other, foreign) == RKNN_SUCC);
    CHECK(rknn_create_mem(ctx, 0) == nullptr);
  }
  SUBCASE("a binding from the old shape is refused after a shape switch") {
    auto attr = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
    attr.type = RKNN_TENSOR_UINT8;
    rknn_tensor_mem* mem = rknn_create_mem(ctx, attr.size_with_stride);
    REQUIRE(rknn_set_io_mem(ctx, mem, &attr) == RKNN_SUCC);
    auto shape = attr;
    shape.dims[1] = shape.dims[2] = 160;
    REQUIRE(rknn_set_input_shapes(ctx, 1, &shape) == RKNN_SUCC);
    CHECK(rknn_run(ctx, nullptr) == RKNN_ERR_INPUT_INVALID);
    CHECK(rknn_destroy_mem(ctx, mem) == RKNN_SUCC);
  }
  SUBCASE("core masks: only multi-core platforms, only valid masks") {
    CHECK(rknn_set_core_mask(ctx, RKNN_NPU_CORE_0_1) == RKNN_SUCC);
    CHECK(rknn_set_core_mask(ctx, static_cast<rknn_core_mask>(0x40)) == RKNN_ERR_PARAM_INVALID);
    Ctx single(test::dyncnn("rk3566"));
    CHECK(rknn_set_core_mask(single, RKNN_NPU_CORE_0) == RKNN_ERR_FAIL);
  }
  SUBCASE("dup_context: refused for dynamic models, works for static ones") {
    rknn_context copy = 0;
    rknn_context source = ctx;
    CHECK(rknn_dup_context(&source, &copy) == RKNN_ERR_MODEL_INVALID);
    Ctx fixed(test::squeezenet());
    source = fixed;
    REQUIRE(rknn_dup_context(&source, &copy) == RKNN_SUCC);
    CHECK(copy != source);
    CHECK(rknn_destroy(copy) == RKNN_SUCC);
  }
  SUBCASE("perf detail needs the collect-perf flag") {
    rknn_perf_detail detail{};
    CHECK(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof detail) == RKNN_ERR_PARAM_INVALID);
  }
}

// ---- regressions of the attack in issue 12 -----------------------------------------------

namespace {

// What the runtime logs while `body` runs (its stderr, captured in a temporary file).
template <class Body> std::string logged(Body&& body) {
  std::fflush(stderr);
  FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  const int saved = dup(2);
  dup2(fileno(capture), 2);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string text;
  std::rewind(capture);
  for (int c = std::fgetc(capture); c != EOF; c = std::fgetc(capture)) text += static_cast<char>(c);
  std::fclose(capture);
  return text;
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// dyncnn's model file changed by `edit`, saved under `name`.
template <class Edit> std::string crafted_model(const std::string& name, Edit&& edit) {
  host::ModelFile file = host::parse_model_file(test::read_bytes(test::dyncnn()));
  edit(file);
  const auto path = test::scratch_dir() / name;
  host::save_model_file(path, file);
  return path.string();
}

int init_path(rknn_context* c, const std::string& path) {
  return rknn_init(c, const_cast<char*>(path.c_str()), 0, 0, nullptr);
}

}  // namespace

TEST_CASE("strides whose byte count wraps 64 bits are refused by rknn_set_io_mem") {
  Ctx ctx(test::dyncnn());
  SUBCASE("an input: 1 x h_stride x w_stride x 3 x 2 bytes wraps to 327674") {
    auto attr = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);  // FLOAT16 NHWC [1,224,224,3]
    REQUIRE(attr.type == RKNN_TENSOR_FLOAT16);
    attr.h_stride = 2147516415U;
    attr.w_stride = 1431633921U;
    rknn_tensor_mem* mem = rknn_create_mem(ctx, 1 << 20);
    const std::string log = logged([&] { CHECK(rknn_set_io_mem(ctx, mem, &attr) == RKNN_ERR_PARAM_INVALID); });
    CHECK(contains(log, "overflows 64 bits"));
    CHECK(rknn_destroy_mem(ctx, mem) == RKNN_SUCC);
  }
  SUBCASE("an output: NATIVE_NHWC, 32 float32 channels, strides 2^29 and 2^28 wrap to 0 bytes") {
    auto attr = query_attr(ctx, RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, 1);  // [1,56,56,32]
    attr.type = RKNN_TENSOR_FLOAT32;
    attr.w_stride = 1U << 29;
    attr.h_stride = 1U << 28;
    rknn_tensor_mem* mem = rknn_create_mem(ctx, 4096);
    CHECK(rknn_set_io_mem(ctx, mem, &attr) == RKNN_ERR_PARAM_INVALID);
    auto img = image(224, 224, 3);
    REQUIRE(set_image(ctx, img) == RKNN_SUCC);
    CHECK(rknn_run(ctx, nullptr) == RKNN_SUCC);  // nothing bound, nothing written out of bounds
    (void)get_float_output(ctx, 0);
    CHECK(rknn_destroy_mem(ctx, mem) == RKNN_SUCC);
  }
}

TEST_CASE("rknn_mem_sync in one thread while another destroys the same memory") {
  // Before shared ownership the sync copied through memory the destroy had unmapped.
  for (int round = 0; round < 40; ++round) {
    rknn_tensor_mem* mem = rknn_create_mem2(0, 8 << 20, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
    REQUIRE(mem != nullptr);
    std::atomic<bool> started{false};
    std::atomic<int> unexpected{0};
    std::thread syncer([&] {
      for (;;) {
        started = true;
        const int rc = rknn_mem_sync(0, mem, RKNN_MEMORY_SYNC_BIDIRECTIONAL);
        if (rc == RKNN_ERR_PARAM_INVALID) break;  // destroyed: refused, never a crash
        if (rc != RKNN_SUCC) ++unexpected;
      }
    });
    while (!started) std::this_thread::yield();
    CHECK(rknn_destroy_mem(0, mem) == RKNN_SUCC);
    syncer.join();
    CHECK(unexpected == 0);
  }
}

TEST_CASE("rknn_query in one thread while another destroys the same context") {
  // The registry hands out shared ownership: a call in flight keeps its context alive past rknn_destroy.
  for (int round = 0; round < 8; ++round) {
    rknn_context ctx = 0;
    REQUIRE(rknn_init(&ctx, const_cast<char*>(test::dyncnn().c_str()), 0, 0, nullptr) == RKNN_SUCC);
    std::atomic<bool> started{false};
    std::atomic<int> unexpected{0};
    std::thread user([&] {
      for (;;) {
        started = true;
        rknn_input_output_num num{};
        const int rc = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &num, sizeof num);
        if (rc == RKNN_ERR_CTX_INVALID) break;  // destroyed: refused, never a crash
        if (rc != RKNN_SUCC || num.n_input != 1) ++unexpected;
      }
    });
    while (!started) std::this_thread::yield();
    CHECK(rknn_destroy(ctx) == RKNN_SUCC);
    user.join();
    CHECK(unexpected == 0);
  }
}

TEST_CASE("rknn_init reads only regular model files, of a bounded size") {
  const test::TempDir scoped;  // a fresh one each pass, so that the FIFO and files are new
  const auto& dir = scoped.path();
  rknn_context c = 0;
  auto refused = [&](const std::string& path, std::string_view why) {
    const std::string log = logged([&] { CHECK(init_path(&c, path) == RKNN_ERR_MODEL_INVALID); });
    CHECK_MESSAGE(contains(log, path), log);
    CHECK_MESSAGE(contains(log, why), log);
    CHECK(c == 0);
  };
  SUBCASE("a character device that never ends") { refused("/dev/zero", "is a character device"); }
  SUBCASE("a directory") { refused(dir.string(), "is a directory"); }
  SUBCASE("a FIFO without a writer, which would block for ever") {
    const auto fifo = (dir / "model.fifo").string();
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    refused(fifo, "is a FIFO");
  }
  SUBCASE("a sparse file of 8 GiB") {
    const auto sparse = (dir / "sparse.hrknn").string();
    { std::ofstream create(sparse); }
    REQUIRE(truncate(sparse.c_str(), off_t{8} << 30) == 0);
    refused(sparse, "more than the 4294967295");
  }
  SUBCASE("an empty file") {
    const auto empty = (dir / "empty.hrknn").string();
    { std::ofstream create(empty); }
    const std::string log = logged([&] { CHECK(init_path(&c, empty) == RKNN_ERR_MODEL_INVALID); });
    CHECK(contains(log, "empty (0 bytes)"));
  }
}

TEST_CASE("rknn_init refuses input shapes the runtime cannot describe, before allocating") {
  const auto path = crafted_model("huge_shape.hrknn", [](host::ModelFile& file) {
    file.dynamic_input->push_back({{1, 3, int64_t{1} << 20, int64_t{1} << 20}});  // 2^40 pixels, MaxShape
  });
  rknn_context c = 0;
  const std::string log = logged([&] { CHECK(init_path(&c, path) == RKNN_ERR_MODEL_INVALID); });
  CHECK_MESSAGE(contains(log, "[1, 3, 1048576, 1048576]"), log);
  CHECK_MESSAGE(contains(log, "at most 4 GiB per tensor"), log);
}

TEST_CASE("the model's config and preprocessing are validated at rknn_init") {
  rknn_context c = 0;
  SUBCASE("7 means and stds for a 3-channel input (section 'prep')") {
    const auto path = crafted_model("prep7.hrknn", [](host::ModelFile& file) {
      file.preprocess = {{std::vector<double>(7, 1.0), std::vector<double>(7, 2.0)}};
    });
    const std::string log = logged([&] { CHECK(init_path(&c, path) == RKNN_ERR_MODEL_INVALID); });
    CHECK_MESSAGE(contains(log, "input 0 ('data')"), log);
    CHECK_MESSAGE(contains(log, "7 mean/std values"), log);
  }
  SUBCASE("7 means in the config (section 'conf')") {
    const auto path = crafted_model("conf7.hrknn", [](host::ModelFile& file) {
      auto config = host::config_from_json(file.config_json);
      config.mean_values = std::vector<std::vector<double>>{std::vector<double>(7, 1.0)};
      config.std_values.reset();
      file.config_json = host::config_to_json(config, host::ConfigJsonFor::model_file, -1);
    });
    const std::string log = logged([&] { CHECK(init_path(&c, path) == RKNN_ERR_MODEL_INVALID); });
    CHECK_MESSAGE(contains(log, "section 'conf'"), log);
    CHECK_MESSAGE(contains(log, "mean_values"), log);
  }
  SUBCASE("a config that is not JSON") {
    const auto path = crafted_model("conf_garbage.hrknn", [](host::ModelFile& file) { file.config_json = "{"; });
    CHECK(init_path(&c, path) == RKNN_ERR_MODEL_INVALID);
  }
  CHECK(c == 0);
}

TEST_CASE("negative or out-of-range offsets and closed fds are refused") {
  auto bytes = test::read_bytes(test::dyncnn());
  const uint32_t size = static_cast<uint32_t>(bytes.size());
  rknn_context c = 0;
  rknn_init_extend extend{};
  extend.real_model_offset = -5;
  CHECK(rknn_init(&c, bytes.data(), size, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, &extend) == RKNN_ERR_PARAM_INVALID);
  extend.real_model_offset = static_cast<int32_t>(size) + 1;
  extend.real_model_size = 1;
  CHECK(rknn_init(&c, bytes.data(), size, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, &extend) == RKNN_ERR_PARAM_INVALID);
  extend.real_model_offset = 0;
  extend.real_model_size = size;
  REQUIRE(rknn_init(&c, bytes.data(), size, RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, &extend) == RKNN_SUCC);
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  std::vector<std::byte> memory(4096);
  CHECK(rknn_create_mem_from_fd(c, pipe_fds[0], memory.data(), 4096, 0) == nullptr);
  CHECK(rknn_destroy(c) == RKNN_SUCC);
}

TEST_CASE("rknn_create_mem_from_fd: a memfd at an offset holds a zero-copy input and output, for every shape") {
  Ctx ctx(test::dyncnn());
  auto attr = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
  const uint32_t in_size = attr.size_with_stride;
  const uint32_t out_size = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 1).n_elems * 4;
  // One file for both, each tensor at an offset, as a camera's or display's dma-buf is shared.
  const int fd = memfd_create("rknnxx-c-api", 0);
  REQUIRE(fd >= 0);
  const uint32_t in_offset = 4096, out_offset = in_offset + ((in_size + 4095) / 4096) * 4096;
  const uint32_t file_size = out_offset + out_size;
  REQUIRE(ftruncate(fd, file_size) == 0);
  void* map = mmap(nullptr, file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  REQUIRE(map != MAP_FAILED);
  auto* base = static_cast<uint8_t*>(map);
  rknn_tensor_mem* in_mem = rknn_create_mem_from_fd(ctx, fd, map, in_size, static_cast<int32_t>(in_offset));
  rknn_tensor_mem* out_mem = rknn_create_mem_from_fd(ctx, fd, map, out_size, static_cast<int32_t>(out_offset));
  REQUIRE(in_mem != nullptr);
  REQUIRE(out_mem != nullptr);
  CHECK(in_mem->virt_addr == map);  // the mapping's start; the tensor starts `offset` bytes in
  CHECK(in_mem->offset == static_cast<int32_t>(in_offset));
  CHECK(in_mem->flags == RKNN_TENSOR_MEMORY_FLAGS_FROM_FD);
  std::memset(base, 0x5A, in_offset);  // bytes before the tensor stay the application's
  for (uint32_t side : {224u, 160u, 100u}) {
    CAPTURE(side);
    attr.dims[1] = attr.dims[2] = side;
    REQUIRE(rknn_set_input_shapes(ctx, 1, &attr) == RKNN_SUCC);
    auto img = image(side, side, 3, side);
    const auto reference = engine_reference(img, side, side, 1);
    auto cur_in = query_attr(ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0);
    for (uint32_t h = 0; h < side; ++h)
      std::memcpy(base + in_offset + size_t{h} * cur_in.w_stride * 3, img.data() + size_t{h} * side * 3, side * 3);
    cur_in.type = RKNN_TENSOR_UINT8;
    REQUIRE(rknn_set_io_mem(ctx, in_mem, &cur_in) == RKNN_SUCC);
    auto cur_out = query_attr(ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, 1);
    cur_out.type = RKNN_TENSOR_FLOAT32;
    REQUIRE(rknn_set_io_mem(ctx, out_mem, &cur_out) == RKNN_SUCC);
    REQUIRE(rknn_mem_sync(ctx, in_mem, RKNN_MEMORY_SYNC_TO_DEVICE) == RKNN_SUCC);
    REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
    REQUIRE(rknn_mem_sync(ctx, out_mem, RKNN_MEMORY_SYNC_FROM_DEVICE) == RKNN_SUCC);
    std::vector<float> got(reference.size());
    std::memcpy(got.data(), base + out_offset, got.size() * sizeof(float));
    CHECK(max_abs_difference(got, reference) == 0.0f);
  }
  CHECK(std::count(base, base + in_offset, uint8_t{0x5A}) == static_cast<std::ptrdiff_t>(in_offset));
  CHECK(rknn_destroy_mem(ctx, in_mem) == RKNN_SUCC);
  CHECK(rknn_destroy_mem(ctx, out_mem) == RKNN_SUCC);
  // The fd and the mapping stay the application's: destroying the descriptors closed neither.
  CHECK(fcntl(fd, F_GETFD) != -1);
  base[0] = 1;

  SUBCASE("the fd of memory rknn_create_mem made is importable too") {
    rknn_tensor_mem* made = rknn_create_mem(ctx, 8192);
    REQUIRE(made != nullptr);
    rknn_tensor_mem* again = rknn_create_mem_from_fd(ctx, made->fd, made->virt_addr, 4096, 4096);
    REQUIRE(again != nullptr);
    CHECK(rknn_destroy_mem(ctx, again) == RKNN_SUCC);
    CHECK(rknn_destroy_mem(ctx, made) == RKNN_SUCC);
  }
  SUBCASE("ranges past the file's end, overflowing offsets and fds that cannot be mapped are refused") {
    std::string log = logged([&] { CHECK(rknn_create_mem_from_fd(ctx, fd, map, file_size, 1) == nullptr); });
    CHECK(contains(log, "past the end of fd"));
    log = logged([&] { CHECK(rknn_create_mem_from_fd(ctx, fd, map, UINT32_MAX, INT32_MAX) == nullptr); });
    CHECK(contains(log, "past the end of fd"));
    log = logged([&] { CHECK(rknn_create_mem_from_fd(ctx, fd, map, 16, -4096) == nullptr); });
    CHECK(contains(log, "negative"));
    log = logged([&] { CHECK(rknn_create_mem_from_fd(ctx, fd, map, 0, 0) == nullptr); });
    CHECK(contains(log, "size is 0"));
    int pipe_fds[2];
    REQUIRE(pipe(pipe_fds) == 0);
    log = logged([&] { CHECK(rknn_create_mem_from_fd(ctx, pipe_fds[0], map, 16, 0) == nullptr); });
    CHECK(contains(log, "is a pipe"));
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    // Not a closed fd's number: the log's capture file would get it. One no process has open.
    const int never_opened = 1 << 20;
    log = logged([&] { CHECK(rknn_create_mem_from_fd(ctx, never_opened, map, 16, 0) == nullptr); });
    CHECK(contains(log, "not an open file descriptor"));
  }
  munmap(map, file_size);
  close(fd);
}

TEST_CASE("a core mask runs the context on the same share of the CPU threads as of the NPU's cores") {
  // The process's threads, as docs/runtime-extensions.md#threads defines them.
  std::size_t all = std::max(1U, std::thread::hardware_concurrency());
  if (const char* env = std::getenv("RKNNXX_HOST_THREADS")) all = std::stoul(env);
  auto threads_reported = [](rknn_context ctx) {
    auto img = image(224, 224, 3);
    REQUIRE(set_image(ctx, img) == RKNN_SUCC);
    REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
    rknn_perf_detail detail{};
    REQUIRE(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof detail) == RKNN_SUCC);
    const std::string table(detail.perf_data, detail.data_len);
    const auto at = table.find(" CPU threads");
    REQUIRE(at != std::string::npos);
    return std::stoul(table.substr(table.rfind(' ', at - 1) + 1));
  };
  Ctx ctx(test::dyncnn(), RKNN_FLAG_COLLECT_PERF_MASK);  // RK3588: three cores
  CHECK(threads_reported(ctx) == all);
  REQUIRE(rknn_set_core_mask(ctx, RKNN_NPU_CORE_0) == RKNN_SUCC);
  CHECK(threads_reported(ctx) == (all + 2) / 3);
  REQUIRE(rknn_set_core_mask(ctx, RKNN_NPU_CORE_0_1) == RKNN_SUCC);
  CHECK(threads_reported(ctx) == (2 * all + 2) / 3);
  REQUIRE(rknn_set_core_mask(ctx, RKNN_NPU_CORE_ALL) == RKNN_SUCC);
  CHECK(threads_reported(ctx) == all);
}

TEST_CASE("contexts run from more threads than the process's threads take turns instead of oversubscribing") {
  // Four contexts, each run from a thread of its own: at most the process's threads compute at once
  // (docs/runtime-extensions.md#threads), the others wait without spinning. Measured as the process's
  // CPU time over the wall time of the whole section. Meaningful where the process's threads are fewer
  // than the cores: meson runs this case again with RKNNXX_HOST_THREADS=1, where four busy callers
  // would use two cores of a 2-core machine.
  std::size_t all = std::max(1U, std::thread::hardware_concurrency());
  if (const char* env = std::getenv("RKNNXX_HOST_THREADS")) all = std::stoul(env);
  const std::string model = test::dyncnn();
  constexpr int contexts = 4, runs = 12;
  std::vector<std::unique_ptr<Ctx>> ctxs;
  for (int c = 0; c < contexts; ++c) ctxs.push_back(std::make_unique<Ctx>(model));
  const auto cpu_seconds = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  std::atomic<int> failures{0};
  const double cpu_before = cpu_seconds();
  const auto wall_before = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < contexts; ++c) {
    threads.emplace_back([&, c] {
      auto img = image(224, 224, 3, static_cast<uint32_t>(c));
      for (int r = 0; r < runs; ++r) {
        rknn_output out{};
        out.want_float = 1;
        if (set_image(*ctxs[c], img) != RKNN_SUCC || rknn_run(*ctxs[c], nullptr) != RKNN_SUCC ||
            rknn_outputs_get(*ctxs[c], 1, &out, nullptr) != RKNN_SUCC ||
            rknn_outputs_release(*ctxs[c], 1, &out) != RKNN_SUCC)
          ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
  const double busy = (cpu_seconds() - cpu_before) / wall;
  MESSAGE("busy threads on average: " << busy << " (the process's threads: " << all << ")");
  CHECK(failures == 0);
  CHECK(busy <= static_cast<double>(all) + 0.25);
}

TEST_CASE("RKNN_QUERY_PERF_DETAIL keeps one buffer per context, not a copy per query") {
  Ctx ctx(test::dyncnn(), RKNN_FLAG_COLLECT_PERF_MASK);
  auto img = image(224, 224, 3);
  REQUIRE(set_image(ctx, img) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  rknn_perf_detail first{}, later{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &first, sizeof first) == RKNN_SUCC);
  for (int i = 0; i < 1000; ++i) REQUIRE(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &later, sizeof later) == RKNN_SUCC);
  CHECK(static_cast<void*>(later.perf_data) == static_cast<void*>(first.perf_data));
  CHECK(later.data_len == first.data_len);
  CHECK(std::strlen(later.perf_data) == later.data_len);
}

TEST_CASE("one context used by two threads: refused with an error, never another thread's outputs") {
  Ctx ctx(test::dyncnn());
  SUBCASE("a call while another thread's inputs wait for their run is refused, with one log line") {
    auto img = image(224, 224, 3);
    REQUIRE(set_image(ctx, img) == RKNN_SUCC);  // this thread's turn lasts until it takes the outputs
    int rc = 0;
    const std::string log = logged([&] {
      std::thread other([&] {
        rknn_input_output_num io{};
        rc = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof io);
      });
      other.join();
    });
    CHECK(rc == RKNN_ERR_CTX_INVALID);
    CHECK_MESSAGE(contains(log, "E RKNN: rknn_query: context"), log);
    CHECK_MESSAGE(contains(log, "is in use by another thread"), log);
    CHECK(std::count(log.begin(), log.end(), '\n') == 1);
    REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
    CHECK(max_abs_difference(get_float_output(ctx, 0), engine_reference(img, 224, 224, 0)) == 0.0f);
    std::thread after([&] {  // the turn is over: another thread may use the context now
      rknn_input_output_num io{};
      rc = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof io);
    });
    after.join();
    CHECK(rc == RKNN_SUCC);
  }
  SUBCASE("two threads hammering one context") {
    std::vector<uint8_t> images[2] = {image(224, 224, 3, 1), image(224, 224, 3, 2)};
    const std::vector<float> expected[2] = {engine_reference(images[0], 224, 224, 0),
                                            engine_reference(images[1], 224, 224, 0)};
    std::atomic<int> correct{0}, refused{0}, wrong{0}, other_errors{0};
    auto hammer = [&](int me) {
      // Until this thread has had 4 turns of its own: refusals in between are the point.
      for (int turns = 0, attempts = 0; turns < 4 && attempts < 100000; ++attempts) {
        rknn_input in{};
        in.index = 0;
        in.type = RKNN_TENSOR_UINT8;
        in.fmt = RKNN_TENSOR_NHWC;
        in.buf = images[me].data();
        in.size = static_cast<uint32_t>(images[me].size());
        rknn_output out{};
        out.want_float = 1;
        int rc = rknn_inputs_set(ctx, 1, &in);
        if (rc == RKNN_SUCC) rc = rknn_run(ctx, nullptr);
        if (rc == RKNN_SUCC) rc = rknn_outputs_get(ctx, 1, &out, nullptr);
        if (rc == RKNN_SUCC) {
          ++turns;
          const auto* values = static_cast<const float*>(out.buf);
          const std::vector<float> got(values, values + out.size / sizeof(float));
          ++(got == expected[me] ? correct : wrong);
          if (rknn_outputs_release(ctx, 1, &out) != RKNN_SUCC) ++other_errors;
        } else {
          ++(rc == RKNN_ERR_CTX_INVALID ? refused : other_errors);
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      }
    };
    logged([&] {  // one line per refusal: kept out of the test's output
      std::thread a(hammer, 0), b(hammer, 1);
      a.join();
      b.join();
    });
    CHECK(wrong == 0);
    CHECK(other_errors == 0);
    CHECK(correct == 8);
    MESSAGE(correct.load() << " correct, " << refused.load() << " refused");
  }
}
