// Ownership of handles (ContextRef, adopt / release / reset, move assignment) and memory the
// application owns bound through IoBinding, on the host runtime (issue 17).
#include "example_image.hpp"
#include "test_models.hpp"

#include <rknnxx/runtime/io_binding.hpp>

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

using namespace rknnxx;

namespace {

// `x = std::move(x)` through a second name, as code that moves between two references to the
// same object does (and which the compilers' self-move warning does not see).
template <class T> void self_move(T& x) {
  T& alias = x;
  x = std::move(alias);
}

// A memfd of `size` bytes mapped shared: memory the application owns, as a dma-buf would be.
struct MemFile {
  explicit MemFile(std::size_t bytes) : size(bytes) {
    fd = ::memfd_create("rknnxx-ownership", 0);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
    map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REQUIRE(map != MAP_FAILED);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  ~MemFile() {
    ::munmap(map, size);
    ::close(fd);
  }
  std::size_t size;
  int fd = -1;
  void* map = nullptr;
};

constexpr std::size_t page = 4096;
std::size_t pages_for(std::size_t bytes) { return (bytes + page - 1) / page * page; }

}  // namespace

static_assert(std::is_nothrow_move_assignable_v<Context> && std::is_nothrow_move_assignable_v<Mem> &&
              std::is_nothrow_move_assignable_v<IoBinding> && std::is_nothrow_move_assignable_v<Outputs> &&
              std::is_nothrow_move_assignable_v<MemAccess<CpuAccess::write>>);
static_assert(std::is_copy_constructible_v<ContextRef> && !std::is_copy_constructible_v<Context>);
static_assert(std::is_convertible_v<const Context&, ContextRef> && !std::is_convertible_v<ContextRef, Context>);
// A temporary Context would die at the end of the statement: IoBinding refuses one.
static_assert(!std::is_constructible_v<IoBinding, Context&&> && std::is_constructible_v<IoBinding, Context&>);

TEST_CASE("ContextRef follows a moved Context and refuses once it is destroyed") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  std::optional<Context> owner(Context::from_file(path));
  const ContextRef ref = *owner;
  CHECK(ref);
  CHECK(ref.native_handle() == owner->native_handle());
  Context moved = std::move(*owner);
  CHECK(ref.num_inputs() == 1);  // the state moved with the context, the reference follows it
  CHECK_FALSE(*owner);
  CHECK_THROWS_WITH_AS((void)owner->num_inputs(), doctest::Contains("moved-from"), Error);
  moved.reset();
  CHECK_FALSE(moved);
  CHECK_FALSE(ref);
  CHECK_THROWS_WITH_AS((void)ref.num_inputs(), doctest::Contains("outlived its Context"), Error);
  moved.reset();  // idempotent
}

TEST_CASE("Context::release hands the handle to C code, Context::adopt takes one over") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  const auto runtime = Runtime::load();
  Context::Options options;
  options.runtime = runtime;
  auto ctx = Context::from_file(path, options);
  const ContextRef ref = ctx;
  ctx.set_input_shapes(2);
  const auto img = example::make_image(100, 100);
  ctx.set_inputs(nhwc_view(img.data(), {1, 3, 100, 100}));
  ctx.run();
  auto outs = ctx.outputs();
  const std::vector<float> expected(outs[0].as<float>().begin(), outs[0].as<float>().end());

  // Refused while C++ objects hold memory made through it; a Mem handed over with Mem::release
  // no longer counts.
  Mem held = ctx.create_mem(64);
  CHECK_THROWS_WITH_AS((void)ctx.release(), doctest::Contains("still held by Mem or IoBinding"), Error);
  CHECK(ctx);  // nothing changed
  rknn_tensor_mem* raw = held.release();
  CHECK_FALSE(held);
  CHECK_THROWS_WITH_AS((void)held.size(), doctest::Contains("empty"), Error);

  const rknn_context handle = ctx.release();
  CHECK_FALSE(ctx);
  CHECK_THROWS_WITH_AS((void)ref.num_inputs(), doctest::Contains("Context::release()"), Error);
  CHECK_THROWS_WITH_AS((void)outs[0], doctest::Contains("Context::release()"), Error);  // given back at release
  CHECK_THROWS_WITH_AS((void)ctx.release(), doctest::Contains("moved-from"), Error);
  // C code uses the handle: the memory handed over is still its to destroy, the context runs.
  const ApiTable& api = runtime->api();
  CHECK(api.rknn_destroy_mem(handle, raw) == RKNN_SUCC);
  CHECK(api.rknn_run(handle, nullptr) == RKNN_SUCC);

  // Taken back: the Context destroys it from now on.
  Context adopted = Context::adopt(handle, options);
  CHECK(adopted.native_handle() == handle);
  adopted.set_input_shapes(2);
  adopted.set_inputs(nhwc_view(img.data(), {1, 3, 100, 100}));
  adopted.run();
  auto again = adopted.outputs();
  const auto got = again[0].as<float>();
  CHECK(std::equal(got.begin(), got.end(), expected.begin(), expected.end()));
  again.reset();
  CHECK_THROWS_WITH_AS((void)again[0], doctest::Contains("reset"), Error);

  CHECK_THROWS_WITH_AS((void)Context::adopt(0, options), doctest::Contains("the handle is 0"), Error);
  // A handle the runtime does not know: refused, and nothing is destroyed.
  CHECK_THROWS_AS((void)Context::adopt(handle + 0x1000, options), Error);
  CHECK(adopted.num_inputs() == 1);
}

TEST_CASE("Context::release is refused while an IoBinding holds memory or custom callables live in the Context") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  {
    IoBinding io(ctx, BindAs::model(), BindAs::type(TensorType::float32));
    CHECK_THROWS_WITH_AS((void)ctx.release(), doctest::Contains("3 runtime buffer(s)"), Error);
  }
  const auto runtime_ptr = &ctx.runtime();
  const rknn_context handle = ctx.release();
  CHECK(runtime_ptr->api().rknn_destroy(handle) == RKNN_SUCC);
}

TEST_CASE("children after reset: IoBinding, Mem, access windows refuse with a clear error") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  IoBinding io(ctx, BindAs::model(), BindAs::type(TensorType::float32));
  Mem m = ctx.create_mem(64);
  auto window = m.write();
  ctx.reset();
  CHECK_THROWS_WITH_AS(io.run(), doctest::Contains("outlived its Context"), Error);
  CHECK_THROWS_WITH_AS(io.set_input_shapes(1), doctest::Contains("outlived its Context"), Error);
  CHECK_THROWS_WITH_AS((void)m.size(), doctest::Contains("outlived its Context"), Error);
  CHECK_THROWS_WITH_AS((void)window.data(), doctest::Contains("outlived its Context"), Error);
  window.reset();  // nothing to sync: the memory went with the context
}

TEST_CASE("move assignment: defined and self-move safe on every handle") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  const rknn_context handle = ctx.native_handle();
  self_move(ctx);
  CHECK(ctx.native_handle() == handle);

  Mem m = ctx.create_mem(64);
  {
    auto w = m.write();
    w.data()[0] = std::byte{7};
  }
  self_move(m);
  CHECK(m.size() == 64);
  Mem other = ctx.create_mem(32);
  other = std::move(m);  // the 32 bytes are destroyed, the 64 move in
  CHECK(other.size() == 64);
  CHECK(other.read().data()[0] == std::byte{7});

  auto w = other.write();
  self_move(w);
  w.data()[1] = std::byte{8};
  auto w2 = other.write();
  w2 = std::move(w);  // closes w2's window (syncing it), takes w's
  w2.data()[2] = std::byte{9};
  w2.reset();
  CHECK(other.read().data()[1] == std::byte{8});

  ctx.set_input_shapes(2);
  const auto img = example::make_image(100, 100);
  ctx.set_inputs(nhwc_view(img.data(), {1, 3, 100, 100}));
  ctx.run();
  auto outs = ctx.outputs();
  self_move(outs);
  CHECK(outs.size() == 2);
  auto outs2 = ctx.outputs();
  outs2 = std::move(outs);
  CHECK(outs2[0].as<float>().size() == 10);

  IoBinding io(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc), BindAs::type(TensorType::float32));
  self_move(io);
  io.set_input_shapes(2);
  io.write("data", nhwc_view(img.data(), {1, 3, 100, 100}));
  io.run();

  // a = std::move(b) where b bound last: a's old memory goes, b's bindings stay valid.
  IoBinding b(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc), BindAs::type(TensorType::float32));
  io = std::move(b);
  io.write("data", nhwc_view(img.data(), {1, 3, 100, 100}));
  io.run();
  ctx.run();
  CHECK_THROWS_WITH_AS(b.run(), doctest::Contains("moved-from"), Error);  // NOLINT: the misuse under test

  // a = std::move(b) where a bound last: the runtime still points at a's memory, which goes, so a
  // run is refused until the tensors are bound again.
  IoBinding older(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc), BindAs::type(TensorType::float32));
  IoBinding newer(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc), BindAs::type(TensorType::float32));
  newer = std::move(older);
  CHECK_THROWS_WITH_AS(ctx.run(), doctest::Contains("went away with its IoBinding"), Error);
  newer.rebind();
  newer.write("data", nhwc_view(img.data(), {1, 3, 100, 100}));
  newer.run();
}

TEST_CASE("Context::wrap_fd: owning Mem over a memfd at an offset, checked, the fd stays the application's") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  MemFile file(3 * page);
  {
    Mem f = ctx.wrap_fd(file.fd, file.map, page, 2 * page);
    CHECK(f.origin() == MemOrigin::from_fd);
    auto w = f.write();
    // The window starts at the offset, not at the mapping's start.
    CHECK(static_cast<void*>(w.data()) == static_cast<std::byte*>(file.map) + 2 * page);
    CHECK(w.size() == page);
  }
  CHECK(::fcntl(file.fd, F_GETFD) != -1);  // destroying the Mem closed nothing
  auto refused = [&](int fd, void* virt, std::uint64_t size, std::int64_t offset, const char* why) {
    CAPTURE(why);
    CHECK_THROWS_WITH_AS((void)ctx.wrap_fd(fd, virt, size, offset), doctest::Contains(why), Error);
  };
  refused(file.fd, file.map, 2 * page, 2 * page, "past the end of fd");
  refused(file.fd, file.map, page, -1, "negative");
  refused(file.fd, file.map, 0, 0, "size is 0");
  refused(file.fd, nullptr, page, 0, "virtual address is null");
  refused(-1, file.map, page, 0, "not a file descriptor");
  refused(file.fd, file.map, UINT64_MAX, 2, "overflows");
  refused(file.fd, file.map, std::uint64_t{1} << 33, 0, "past the end");
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  refused(fds[0], file.map, 16, 0, "is a pipe");
  ::close(fds[0]);
  ::close(fds[1]);
  refused(1 << 20, file.map, 16, 0, "not an open file descriptor");  // a number no process has open
}

TEST_CASE("IoBinding with the application's memory: a memfd-backed input and output through every shape") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  const BindAs in_as = BindAs::type(TensorType::uint8, TensorFormat::nhwc);
  const BindAs out_as = BindAs::type(TensorType::float32, TensorFormat::nchw);
  // The sizes the binding would allocate: the largest shape of the set.
  std::uint32_t in_need = 0, out_need = 0;
  {
    IoBinding probe(ctx);
    probe.bind_input("data", in_as);
    probe.bind_output("logits", out_as);
    in_need = probe.input_memory("data").size();
    out_need = probe.output_memory("logits").size();
  }
  MemFile file(page + pages_for(in_need) + out_need);
  const std::size_t out_offset = page + pages_for(in_need);
  Mem input = ctx.wrap_fd(file.fd, file.map, in_need, page);
  Mem output = ctx.wrap_fd(file.fd, file.map, out_need, static_cast<std::int64_t>(out_offset));
  int begins = 0, ends = 0;
  CpuAccess last = CpuAccess::read;
  input.set_cpu_access_hook({[&](CpuAccess a) {
                               ++begins;
                               last = a;
                             },
                             [&](CpuAccess a) {
                               ++ends;
                               last = a;
                             }});

  IoBinding io(ctx);
  io.bind_input("data", input, in_as);
  io.bind_output("logits", output, out_as);
  io.bind_output("features", out_as);  // the binding's own memory beside the application's
  for (std::size_t g = 0; g < ctx.shape_set()->num_shapes(); ++g) {
    CAPTURE(g);
    const auto shape = io.set_input_shapes(g);
    const Dims d = shape.inputs[0].dims();
    const auto img = example::make_image(d[1], d[2]);
    const auto view = nhwc_view(img.data(), {1, 3, d[1], d[2]});
    const int before = begins;
    io.write("data", view);
    CHECK(begins == before + 1);
    CHECK(ends == begins);
    CHECK(last == CpuAccess::write);
    io.run();
    std::vector<float> zero_copy;
    {
      auto logits = io.output<float>("logits");
      zero_copy.assign(logits.begin(), logits.end());
    }
    // The results are in the application's file, at its offset.
    std::vector<float> in_file(10);
    std::memcpy(in_file.data(), static_cast<std::byte*>(file.map) + out_offset, 10 * sizeof(float));
    CHECK(in_file == zero_copy);
    ctx.set_inputs(view);
    ctx.run();
    auto general = ctx.outputs();
    const auto expected = general[0].as<float>();
    CHECK(std::equal(zero_copy.begin(), zero_copy.end(), expected.begin(), expected.end()));
  }
  CHECK(io.input_memory("data").native_handle() == input.native_handle());

  // The application's Mem may move; the binding holds the memory, not the object.
  Mem moved = std::move(input);
  io.set_input_shapes(0);
  const auto img = example::make_image(224, 224);
  io.write("data", nhwc_view(img.data(), {1, 3, 224, 224}));
  io.run();

  // Destroyed by the application: the binding and the context refuse to use it.
  moved.reset();
  CHECK_THROWS_WITH_AS(io.write("data", nhwc_view(img.data(), {1, 3, 224, 224})),
                       doctest::Contains("application's memory bound to input 0 \"data\" was destroyed"), Error);
  CHECK_THROWS_WITH_AS(io.run(), doctest::Contains("was destroyed"), Error);
  CHECK_THROWS_WITH_AS(ctx.run(), doctest::Contains("application's memory bound to input 0 \"data\""), Error);
  CHECK_THROWS_WITH_AS(io.set_input_shapes(1), doctest::Contains("was destroyed"), Error);
  io.bind_input("data", in_as);  // the binding's own memory again
  io.set_input_shapes(1);
  const auto small = example::make_image(160, 160);
  io.write("data", nhwc_view(small.data(), {1, 3, 160, 160}));
  io.run();
}

TEST_CASE("IoBinding with the application's memory: too small or another context's is refused, the old binding kept") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  const BindAs in_as = BindAs::type(TensorType::uint8, TensorFormat::nhwc);
  IoBinding io(ctx, in_as, BindAs::type(TensorType::float32));
  const std::uint32_t need = io.input_memory("data").size();
  Mem small = ctx.create_mem(need - 1);
  const std::string too_small =
      fmt::format("input 0 \"data\" holds {} bytes; the tensor needs {} bytes", need - 1, need);
  CHECK_THROWS_WITH_AS(io.bind_input("data", small, in_as), doctest::Contains(too_small.c_str()), Error);
  // The refused bind left the earlier binding in place.
  const auto img = example::make_image(224, 224);
  io.write("data", nhwc_view(img.data(), {1, 3, 224, 224}));
  io.run();
  ctx.run();
  auto other = Context::from_file(path);
  Mem foreign = other.create_mem(need);
  CHECK_THROWS_WITH_AS(io.bind_input("data", foreign, in_as), doctest::Contains("another context"), Error);
  // Made with create_mem, exactly the largest size: accepted, and used for every shape.
  Mem exact = ctx.create_mem(need);
  io.bind_input("data", exact, in_as);
  for (std::size_t g = 0; g < 3; ++g) {
    const auto shape = io.set_input_shapes(g);
    const Dims d = shape.inputs[0].dims();
    const auto im = example::make_image(d[1], d[2]);
    io.write("data", nhwc_view(im.data(), {1, 3, d[1], d[2]}));
    io.run();
  }
  // A view the binding holds cannot be released in place of the application's Mem.
  CHECK_THROWS_WITH_AS((void)io.input_memory("data").release(), doctest::Contains("release the application's Mem"),
                       Error);
}

TEST_CASE("a write window whose runtime sync fails still ends the CPU-access hook's window") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  Mem mem = ctx.create_mem(64);
  int begins = 0, ends = 0;
  mem.set_cpu_access_hook({[&](CpuAccess) { ++begins; }, [&](CpuAccess) { ++ends; }});
  auto window = mem.write();
  CHECK(begins == 1);
  // C code destroys the memory under the open window: the closing rknn_mem_sync(TO_DEVICE) fails.
  rknn_tensor_mem* raw = mem.release();
  REQUIRE(ctx.runtime().api().rknn_destroy_mem(ctx.native_handle(), raw) == RKNN_SUCC);
  CHECK_THROWS_WITH_AS(window.reset(), doctest::Contains("rknn_mem_sync"), Error);
  CHECK(ends == 1);  // a dma-buf's DMA_BUF_IOCTL_SYNC END is not left out
}
