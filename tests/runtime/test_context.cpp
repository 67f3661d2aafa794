// Context, Mem, Outputs and the general API on the host runtime, misuse included.
#include "example_image.hpp"
#include "test_models.hpp"

#include <rknnxx/runtime/context.hpp>
#include <rknnxx/tensor/convert.hpp>
#include <rknnxx/tensor/view.hpp>

#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

using namespace rknnxx;

namespace {
std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}
}  // namespace

TEST_CASE("Context: made from a file on the host runtime, with typed queries") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  CHECK(ctx.runtime().is_host());
  CHECK_FALSE(ctx.runtime().path().empty());  // the file dlopen resolved
  CHECK(ctx.native_handle() != 0);
  const SdkVersion v = ctx.sdk_version();
  CHECK(v.api_version >= min_sdk_version);
  CHECK(ctx.runtime().sdk_version().has_value());  // read and checked at the first context
  CHECK(ctx.io_count() == IoCount{1, 2});
  CHECK(ctx.num_inputs() == 1);
  CHECK(ctx.num_outputs() == 2);
  CHECK(ctx.input_index("data") == 0);
  CHECK(ctx.output_index("features") == 1);
  CHECK_THROWS_WITH_AS((void)ctx.output_index("nope"), doctest::Contains("\"logits\", \"features\""), Error);
  CHECK_THROWS_WITH_AS((void)ctx.input_index(3), doctest::Contains("out of range"), Error);
  const TensorInfo in = ctx.input_info("data");
  CHECK(in.format() == TensorFormat::nhwc);
  CHECK(in.dims() == Dims{1, 224, 224, 3});  // the largest shape before any switch
  CHECK(ctx.input_infos().size() == 1);
  const TensorInfo native = ctx.output_info("features", AttrQuery::native);
  CHECK(native.format() == TensorFormat::nc1hwc2);
  CHECK(native.dims().rank() == 5);
  CHECK(ctx.output_infos(AttrQuery::native_nhwc)[1].format() == TensorFormat::nhwc);
  CHECK(ctx.custom_string() == "rknnxx runtime tests");
  CHECK(ctx.mem_size().total_weight_size > 0);
  CHECK(ctx.flags() == InitFlags{});
  CHECK(ctx.is_dynamic());
  CHECK_FALSE(ctx.current_shape_group().has_value());
}

TEST_CASE("Context: from a buffer, from zero-copy model memory, and a bad model") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  const auto bytes = read_bytes(path);
  auto a = Context::from_buffer(bytes);
  CHECK(a.num_outputs() == 2);
  Mem model = Mem::allocate_without_context(bytes.size());
  {
    auto w = model.write();
    std::memcpy(w.data(), bytes.data(), bytes.size());
  }
  auto b = Context::from_model_memory(std::move(model));
  CHECK(b.flags().has(InitFlag::model_buffer_zero_copy));
  CHECK(b.custom_string() == "rknnxx runtime tests");
  CHECK_THROWS_WITH_AS((void)Context::from_file("/nonexistent.hrknn"),
                       doctest::Contains("model file /nonexistent.hrknn"), Error);
  std::vector<std::byte> junk(64, std::byte{7});
  try {
    (void)Context::from_buffer(junk);
    FAIL("junk was loaded");
  } catch (const Error& e) {
    CHECK(e.call() == "rknn_init");
    CHECK(e.code().category() == rknn_category());
  }
  CHECK_THROWS_AS((void)Context::from_buffer({}), Error);
}

TEST_CASE("Context: the general API with typed views; outputs are RAII and typed") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path, {.flags = InitFlag::collect_perf});
  const ShapeChange change = ctx.set_input_shapes(2);  // 100 x 100
  CHECK(change.inputs[0].dims() == Dims{1, 100, 100, 3});
  CHECK(change.outputs[1].dims() == Dims{1, 32, 25, 25});
  const auto img = example::make_image(100, 100);
  ctx.set_inputs(nhwc_view(img.data(), {.n = 1, .c = 3, .h = 100, .w = 100}));
  ctx.run();
  CHECK(ctx.last_run_duration().count() >= 0);
  CHECK_FALSE(ctx.perf_detail().empty());
  {
    auto out = ctx.outputs();
    REQUIRE(out.size() == 2);
    CHECK(out[0].as<float>().size() == 10);
    CHECK(out["features"].dims() == Dims{1, 32, 25, 25});
    const auto features = out["features"].view<float, layout::NCHW>();
    CHECK(features(0, 31, 24, 24) == out[1].as<float>().back());
    CHECK_THROWS_WITH_AS((void)out[0].as<std::int8_t>(), doctest::Contains("the output holds FP32"), Error);
    CHECK_THROWS_AS((void)out[2], Error);
    CHECK_THROWS_WITH_AS((void)out["x"], doctest::Contains("no output is named \"x\""), Error);
  }
  {
    auto native = ctx.outputs(OutputType::native);
    CHECK(native[0].type() == TensorType::float16);
    CHECK(native[0].as<Float16>().size() == 10);
  }
  // The same image as NCHW float: the runtime converts both.
  std::vector<float> planar(3 * 100 * 100);
  copy(nhwc_view(img.data(), {1, 3, 100, 100}), nchw_view(planar.data(), {1, 3, 100, 100}));
  ctx.set_inputs(nchw_view(planar.data(), {1, 3, 100, 100}));
  ctx.run();
  auto again = ctx.outputs();
  CHECK(again[0].as<float>().size() == 10);
  // Views that do not fit the current shape are refused before the C call.
  const auto big = example::make_image(160, 160);
  CHECK_THROWS_WITH_AS(ctx.set_inputs(nhwc_view(big.data(), {1, 3, 160, 160})),
                       doctest::Contains("the current input shape is NHWC [1, 100, 100, 3]"), Error);
  CHECK_THROWS_WITH_AS(ctx.set_inputs(std::span<const InputData>{}), doctest::Contains("0 inputs given"), Error);
  std::vector<std::uint8_t> strided(100 * 112 * 3);
  CHECK_THROWS_WITH_AS(ctx.set_inputs(nhwc_view(strided.data(), {1, 3, 100, 100}, 112)), doctest::Contains("dense"),
                       Error);
}

TEST_CASE("Context: cores are checked against the platform") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path, {.platform = Platform::rk3588});
  ctx.set_core_mask(CoreMask::core_0_1);
  ctx.set_core_mask(CoreMaskFor<Platform::rk3588>(CoreMask::core_0_1_2));
  ctx.set_batch_core_num(2);
  CHECK_THROWS_WITH_AS(ctx.set_batch_core_num(4), doctest::Contains("RK3588 has 1..3"), Error);
  CHECK_THROWS_AS(ctx.set_core_mask(static_cast<CoreMask>(8)), Error);
  auto single = Context::from_file(path, {.platform = Platform::rk3566});
  CHECK_THROWS_WITH_AS(single.set_core_mask(CoreMask::core_0), doctest::Contains("RK3566 has one NPU core"), Error);
}

TEST_CASE("Context: move-only; a moved-from context refuses use; dup is refused for dynamic models") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  static_assert(!std::is_copy_constructible_v<Context> && std::is_nothrow_move_constructible_v<Context>);
  auto a = Context::from_file(path);
  const rknn_context handle = a.native_handle();
  Context b = std::move(a);
  CHECK(b.native_handle() == handle);
  CHECK_THROWS_WITH_AS(a.run(), doctest::Contains("moved-from"), Error);  // NOLINT: the misuse under test
  CHECK_THROWS_AS((void)a.num_inputs(), Error);
  a = std::move(b);
  CHECK(a.native_handle() == handle);
  // As on the board, a dynamic-shape model has no rknn_dup_context.
  try {
    (void)a.dup();
    MESSAGE("dup allowed");
  } catch (const Error& e) {
    CHECK(e.call() == "rknn_dup_context");
    CHECK(e.errc() == Errc::model_invalid);
  }
}

TEST_CASE("Mem: create, CPU access windows with cache sync, fd and physical memory, weights") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path, {.flags = InitFlag::disable_flush_input_mem_cache});
  Mem m = ctx.create_mem(256);
  CHECK(m.size() == 256);
  CHECK(m.origin() == MemOrigin::allocated);
  CHECK(m.native_handle() != nullptr);
  {
    auto w = m.write();
    std::fill(w.bytes().begin(), w.bytes().end(), std::byte{0x5A});
    CHECK(w.as<std::uint32_t>().size() == 64);
  }
  {
    auto r = m.read();
    CHECK(r.data()[255] == std::byte{0x5A});
    auto rw = m.read_write();
    rw.data()[0] = std::byte{1};
    rw.reset();
    CHECK_THROWS_WITH_AS((void)rw.data(), doctest::Contains("closed"), Error);
  }
  Mem m2 = ctx.create_mem(128, MemAlloc::cacheable);
  CHECK(m2.size() == 128);
  // Application memory: a DMA-buf-like fd (memfd here) and a "physical" address.
  const int fd = ::memfd_create("rknnxx-test", 0);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 8192) == 0);
  void* map = ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  REQUIRE(map != MAP_FAILED);
  {
    Mem f = ctx.wrap_fd(fd, map, 4096, 4096);
    CHECK(f.fd() == fd);
    CHECK(f.offset() == 4096);
    CHECK(f.origin() == MemOrigin::from_fd);
    Mem p = ctx.wrap_phys(0x1000, map, 4096);
    CHECK(p.phys_addr() == 0x1000);
    CHECK(p.origin() == MemOrigin::from_phys);
  }
  ::munmap(map, 8192);
  ::close(fd);
  CHECK_THROWS_AS((void)ctx.wrap_fd(-1, nullptr, 16), Error);
  Mem weights = ctx.create_mem(ctx.mem_size().total_weight_size);
  ctx.set_weight_mem(weights);
  Mem internal = ctx.create_mem(std::max<std::uint32_t>(ctx.mem_size().total_internal_size, 1));
  ctx.set_internal_mem(internal);
  // Memory of another context is refused.
  auto other = Context::from_file(path);
  Mem foreign = other.create_mem(16);
  CHECK_THROWS_WITH_AS(ctx.set_weight_mem(foreign), doctest::Contains("another context"), Error);
  Mem empty;
  CHECK_FALSE(empty);
  CHECK_THROWS_WITH_AS((void)empty.size(), doctest::Contains("empty"), Error);
  Mem moved = std::move(m);
  CHECK(moved.size() == 256);
  CHECK_FALSE(m);  // NOLINT: the moved-from state under test
  moved.reset();
  CHECK_FALSE(moved);
}

TEST_CASE("misuse: memory and outputs outliving their context are refused, not dangling") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  Mem m;
  std::optional<Outputs> outs;
  {
    auto ctx = Context::from_file(path);
    m = ctx.create_mem(64);
    ctx.set_input_shapes(2);
    const auto img = example::make_image(100, 100);
    ctx.set_inputs(nhwc_view(img.data(), {1, 3, 100, 100}));
    ctx.run();
    outs.emplace(ctx.outputs());
  }
  CHECK_THROWS_WITH_AS((void)m.size(), doctest::Contains("outlived its Context"), Error);
  CHECK_THROWS_WITH_AS((void)m.write(), doctest::Contains("outlived its Context"), Error);
  CHECK_THROWS_WITH_AS((void)(*outs)[0], doctest::Contains("outlived its Context"), Error);
  outs.reset();  // the destructors do nothing harmful
}

#if RKNNXX_THREAD_CHECKS
TEST_CASE("misuse: a context used from a second thread while the first owns it (debug builds)") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  (void)ctx.num_inputs();  // this thread owns it now
  std::string message;
  std::thread([&] {
    try {
      (void)ctx.num_inputs();
    } catch (const Error& e) {
      message = e.what();
    }
  }).join();
  CHECK(message.find("a Context is used by one thread at a time") != std::string::npos);
  ctx.release_thread();
  bool ok = false;
  std::thread([&] {
    ok = ctx.num_inputs() == 1;
    ctx.release_thread();
  }).join();
  CHECK(ok);
  CHECK(ctx.num_inputs() == 1);
}
#endif
