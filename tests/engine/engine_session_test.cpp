// Sessions: input checks, symbolic dimensions, shape inference, memory plan, threads,
// float16 activation storage, plan caching and constant folding.

#include "engine_test_model.hpp"
#include "op_registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

// A small CNN: conv -> relu -> depthwise conv -> add (residual) -> pool -> gemm -> softmax
PreparedOp prepare_test_flatten(OpContext& ctx);

ModelBuilder small_cnn(int64_t batch = 1) {
  // Flatten proper belongs to the shape-operator files; a test-only one in a domain of its own
  // keeps this test independent of them.
  static const OpRegistrar test_flatten{"Flatten", prepare_test_flatten, "test.rknnxx"};
  ModelBuilder m(13);
  m.input("image", DataType::float32, {batch, 3, 16, 16})
      .initializer("w1", random_tensor({8, 3, 3, 3}, 1))
      .initializer("b1", random_tensor({8}, 2))
      .initializer("w2", random_tensor({8, 1, 3, 3}, 3))
      .initializer("w3", random_tensor({16, 8, 1, 1}, 4))
      .initializer("fc", random_tensor({10, 16}, 5))
      .initializer("fcb", random_tensor({10}, 6))
      .initializer("shape", Tensor::from<int64_t>({2}, {-1, 16}))
      .output("probs")
      .node("Conv", {"image", "w1", "b1"}, {"c1"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .node("Relu", {"c1"}, {"r1"})
      .node("Conv", {"r1", "w2"}, {"c2"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1}), attr("group", int64_t{8})})
      .node("Add", {"c2", "r1"}, {"a"})
      .node("Conv", {"a", "w3"}, {"c3"}, {attr("strides", std::vector<int64_t>{2, 2})})
      .node("Sigmoid", {"c3"}, {"s3"})
      .node("GlobalAveragePool", {"s3"}, {"g"})
      .node("Flatten", {"g"}, {"f"}, {}, "", "test.rknnxx")
      .node("Gemm", {"f", "fc", "fcb"}, {"logits"}, {attr("transB", int64_t{1})})
      .node("Softmax", {"logits"}, {"probs"});
  return m;
}

PreparedOp prepare_test_flatten(OpContext& ctx) {
  const auto& s = ctx.input(0).shape;
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 1), static_cast<int64_t>(s.size()));
  const auto split = static_cast<std::size_t>(axis);
  PreparedOp op;
  op.outputs = {TensorInfo{ctx.input(0).dtype,
                           {element_count(std::span(s).first(split)), element_count(std::span(s).subspan(split))}}};
  op.kernel = [](KernelContext& k) { std::memcpy(k.output(0).raw(), k.input(0).raw(), k.input(0).bytes()); };
  return op;
}
}  // namespace

TEST_SUITE("engine.session") {
  TEST_CASE("a wrong input type or shape names the input, expected and given") {
    Session s(small_cnn().model());
    CHECK(s.input_names() == std::vector<std::string>{"image"});
    CHECK(s.output_names() == std::vector<std::string>{"probs"});
    CHECK(error_of([&] {
            s.run(std::vector{Tensor(DataType::float32, {1, 3, 16, 15})});
          }) ==
          "input 'image': expected float32 [1, 3, 16, 16], given float32 [1, 3, 16, 15] (dimension 3 must be 16)");
    CHECK(error_of([&] {
            s.run(std::vector{Tensor(DataType::int32, {1, 3, 16, 16})});
          }) == "input 'image': expected float32 [1, 3, 16, 16], given int32 [1, 3, 16, 16] (wrong element type)");
    CHECK(error_of([&] {
            s.run(std::vector{Tensor(DataType::float32, {3, 16, 16})});
          }).find("(wrong rank)") != std::string::npos);
    CHECK(error_of([&] { s.run(std::vector<Tensor>{}); }) == "the graph has 1 inputs, given 0");
  }

  TEST_CASE("symbolic dimensions take the values of the inputs and must agree") {
    ModelBuilder m(13);
    m.input("a", DataType::float32, {-1, 2})
        .input("b", DataType::float32, {-1, 2})
        .output("y")
        .node("Add", {"a", "b"}, {"y"});
    Session s(m.model());
    auto y = s.run(std::vector{Tensor(DataType::float32, {3, 2}), Tensor(DataType::float32, {3, 2})});
    CHECK(y[0].shape() == std::vector<int64_t>{3, 2});
    y = s.run(std::vector{Tensor(DataType::float32, {5, 2}), Tensor(DataType::float32, {5, 2})});
    CHECK(y[0].shape() == std::vector<int64_t>{5, 2});
    CHECK(error_of([&] {
            s.run(std::vector{Tensor(DataType::float32, {5, 2}), Tensor(DataType::float32, {4, 2})});
          }) ==
          "input 'b': expected float32 [N, 2], given float32 [4, 2] (dimension 0 is 'N', which is 5 in input 'a')");
  }

  TEST_CASE("shape inference covers every value for the given input shapes") {
    Session s(small_cnn(-1).model());
    const std::vector<TensorInfo> in{{DataType::float32, {4, 3, 16, 16}}};
    s.prepare(in);
    CHECK(s.info("r1") == TensorInfo{DataType::float32, {4, 8, 16, 16}});
    CHECK(s.info("s3") == TensorInfo{DataType::float32, {4, 16, 8, 8}});  // c3: fused into the Conv with Sigmoid
    CHECK(s.info("logits") == TensorInfo{DataType::float32, {4, 10}});
    CHECK(s.output_infos().front().shape == std::vector<int64_t>{4, 10});
    CHECK_THROWS_AS(s.info("nope"), EngineError);
    // an inference error names the node
    ModelBuilder bad(13);
    bad.input("x", DataType::float32, {2, 3})
        .initializer("w", random_tensor({4, 5}, 1))
        .output("y")
        .node("MatMul", {"x", "w"}, {"y"}, {}, "mm");
    Session b(bad.model());
    CHECK(error_of([&] {
            b.prepare(std::vector<TensorInfo>{{DataType::float32, {2, 3}}});
          }).find("node 'mm' (MatMul): inputs 'x' [2, 3] and 'w' [4, 5] cannot be multiplied") != std::string::npos);
  }

  TEST_CASE("the arena reuses memory: peak smaller than the sum of intermediates") {
    ModelBuilder m(13);
    m.input("x", DataType::float32, {64, 64}).output("y");
    std::string prev = "x";
    for (int i = 0; i < 12; ++i) {
      const std::string next = i == 11 ? "y" : "t" + std::to_string(i);
      m.node(i == 0 ? "Relu" : "Neg", {prev}, {next});
      prev = next;
    }
    Session s(m.model());
    const auto x = random_tensor({64, 64}, 3);
    const auto y = s.run(std::vector{x});
    const PlanStats& st = s.stats();
    CHECK(st.steps == 12);
    CHECK(st.intermediate_bytes == 12 * 64 * 64 * 4);
    CHECK(st.arena_bytes <= 2 * 64 * 64 * 4);
    for (std::size_t i = 0; i < 4096; ++i) {
      REQUIRE(y[0].values<float>()[i] == -std::max(x.values<float>()[i], 0.0f));
    }
  }

  TEST_CASE("Reshape and its kin store their output in their input's memory where nothing else reads the input") {
    // r -> Reshape -> a -> Identity -> b -> Neg -> n -> Reshape -> z (a graph output): three aliases, one block.
    // s is read by a Reshape and by a Neg: its Reshape copies, so that a rounding of u leaves v's input as it was.
    ModelBuilder m(13);
    m.input("x", DataType::float32, {4, 6})
        .initializer("wide", Tensor::from<int64_t>({2}, {2, 12}))
        .initializer("flat", Tensor::from<int64_t>({1}, {24}))
        .output("z")
        .output("u")
        .output("v")
        .node("Relu", {"x"}, {"r"})
        .node("Reshape", {"r", "wide"}, {"a"})
        .node("Identity", {"a"}, {"b"})
        .node("Neg", {"b"}, {"n"})
        .node("Reshape", {"n", "flat"}, {"z"})
        .node("Sigmoid", {"x"}, {"s"})
        .node("Reshape", {"s", "flat"}, {"u"})
        .node("Neg", {"s"}, {"v"});
    Session session(m.model());
    const ValueId u = *session.graph().find("u");
    // u rounded to halves as stored: in place, that would round s under the Neg reading it.
    session.set_output_rounding([u](ValueId id, std::span<float> values) {
      if (id == u)
        for (float& v : values) v = std::nearbyint(v * 2.0f) / 2.0f;
    });
    const auto x = random_tensor({4, 6}, 3);
    const auto got = session.run(std::vector{x});
    CHECK(session.stats().aliased_values == 3);
    REQUIRE(got.size() == 3);
    CHECK(got[0].shape() == std::vector<int64_t>{24});
    for (std::size_t i = 0; i < 24; ++i) {
      const float xi = x.values<float>()[i], s = 1.0f / (1.0f + std::exp(-xi));
      CHECK(got[0].values<float>()[i] == -std::max(xi, 0.0f));
      CHECK(got[1].values<float>()[i] == std::nearbyint(s * 2.0f) / 2.0f);
      CHECK(got[2].values<float>()[i] == doctest::Approx(-s).epsilon(1e-6));
    }
  }

  TEST_CASE("an output rounding changes only the values its scope names") {
    ModelBuilder m(13);
    m.input("x", DataType::float32, {64}).output("a").output("b");
    m.node("Relu", {"x"}, {"a"}).node("Neg", {"x"}, {"b"});
    Session session(m.model());
    const ValueId b = *session.graph().find("b");
    session.set_output_rounding(
        [](ValueId, std::span<float> values) {
          for (float& v : values) v = std::nearbyint(v * 2.0f) / 2.0f;
        },
        {}, [b](ValueId id) { return id == b; });
    const auto x = random_tensor({64}, 5);
    const auto got = session.run(std::vector{x});
    for (std::size_t i = 0; i < 64; ++i) {
      const float xi = x.values<float>()[i];
      CHECK(got[0].values<float>()[i] == std::max(xi, 0.0f));
      CHECK(got[1].values<float>()[i] == std::nearbyint(-xi * 2.0f) / 2.0f);
    }
  }

  TEST_CASE("a caller's arena holds the intermediates, and two sessions can share it") {
    const auto model = small_cnn(-1).model();
    const auto x2 = random_tensor({2, 3, 16, 16}, 7);
    const auto x3 = random_tensor({3, 3, 16, 16}, 8);
    Session own(model);
    const auto expected2 = own.run(std::vector{x2});
    const std::size_t needed2 = own.stats().arena_bytes;
    const auto expected3 = own.run(std::vector{x3});
    const std::size_t needed3 = own.stats().arena_bytes;
    REQUIRE(needed3 > needed2);

    AlignedBuffer shared(needed3);
    std::memset(shared.data(), 0xAB, shared.size());
    Session a(model), b(model);
    a.use_arena({shared.data(), needed3});
    b.use_arena({shared.data(), needed3});
    check_close(a.run(std::vector{x2})[0], expected2[0], 0.0f);
    // the run wrote its intermediates into the caller's bytes
    const auto untouched = std::count(shared.data(), shared.data() + needed2, std::byte{0xAB});
    CHECK(untouched < static_cast<std::ptrdiff_t>(needed2 / 2));
    // b overwrites the shared bytes; a's next run still computes from its own inputs
    check_close(b.run(std::vector{x3})[0], expected3[0], 0.0f);
    check_close(a.run(std::vector{x3})[0], expected3[0], 0.0f);
    check_close(a.run(std::vector{x2})[0], expected2[0], 0.0f);

    // too small for the plan: refused with both sizes, and the session stays usable
    Session small(model);
    small.use_arena({shared.data(), needed2});
    check_close(small.run(std::vector{x2})[0], expected2[0], 0.0f);
    CHECK(error_of([&] { small.run(std::vector{x3}); }) ==
          fmt::format("the arena memory of {} bytes is smaller than the {} bytes this plan needs", needed2, needed3));
    small.use_arena({});  // back to its own memory
    check_close(small.run(std::vector{x3})[0], expected3[0], 0.0f);
    // misaligned memory is refused before any run
    CHECK(error_of([&] {
            small.use_arena({shared.data() + 8, needed2});
          }).find("is not aligned to 16 bytes") != std::string::npos);
  }

  TEST_CASE("weights moved into a caller's memory are read from there") {
    const auto model = small_cnn(2).model();
    const auto x = random_tensor({2, 3, 16, 16}, 7);
    Session s(model);
    const auto expected = s.run(std::vector{x});  // a plan exists before the weights move
    const std::size_t bytes = s.weight_bytes();
    // the constants the nodes use, each at a 16-byte boundary: 8x3x3x3, 8, 8x1x3x3, 16x8x1x1, 10x16 and
    // 10 floats; the initializer 'shape', which no node reads, takes no room
    CHECK(bytes == (216 + 8 + 72 + 128 + 160 + 10) * 4);
    AlignedBuffer weights(bytes);
    CHECK(error_of([&] {
            s.use_weight_memory({weights.data(), bytes - 1});
          }) ==
          fmt::format("the weight memory of {} bytes is smaller than the {} bytes of the constants", bytes - 1, bytes));
    CHECK(error_of([&] {
            s.use_weight_memory({weights.data() + 4, bytes});
          }).find("is not aligned to 16 bytes") != std::string::npos);
    s.use_weight_memory({weights.data(), bytes});
    check_close(s.run(std::vector{x})[0], expected[0], 0.0f);
    // the session reads the caller's bytes: clearing them changes the result
    std::memset(weights.data(), 0, bytes);
    const auto cleared = s.run(std::vector{x});
    CHECK(std::memcmp(cleared[0].raw(), expected[0].raw(), expected[0].bytes()) != 0);
  }

  TEST_CASE("one thread and several threads give the same results") {
    const auto model = small_cnn(2).model();
    const auto x = random_tensor({2, 3, 16, 16}, 7);
    Session one(model, {.threads = 1});
    Session four(model, {.threads = test_threads(4)});
    CHECK(one.threads() == 1);
    CHECK(four.threads() == test_threads(4));
    const auto a = one.run(std::vector{x});
    const auto b = four.run(std::vector{x});
    check_close(a[0], b[0], 1e-6f);
    const auto again = four.run(std::vector{x});  // a second run reuses the plan and arena
    check_close(again[0], b[0], 0.0f);
    float sum = 0;
    for (float v : a[0].values<float>()) sum += v;
    CHECK(sum == doctest::Approx(2.0f));
  }

  TEST_CASE("float16 activation storage rounds every activation") {
    ModelBuilder m(13);
    m.input("x", DataType::float32, {4})
        .initializer("k", Tensor::from<float>({4}, {3, 3, 3, 3}))
        .output("y")
        .node("Div", {"x", "k"}, {"t"})
        .node("Mul", {"t", "k"}, {"y"});
    const auto x = Tensor::from<float>({4}, {1.0f, 0.1f, 1000.1f, 1e-6f});
    const Tensor exact = run_one(m.model(), {x});
    const Tensor half = run_one(m.model(), {x}, {.float16_activations = true});
    for (std::size_t i = 0; i < 4; ++i) {
      const float xi = round_to_half(x.values<float>()[i]);
      const float want = round_to_half(round_to_half(xi / 3.0f) * 3.0f);
      CHECK(half.values<float>()[i] == want);
      CHECK(round_to_half(half.values<float>()[i]) == half.values<float>()[i]);
    }
    CHECK(exact.values<float>()[1] == doctest::Approx(0.1f));
    CHECK(half.values<float>()[1] != exact.values<float>()[1]);
  }

  TEST_CASE("float16 activation storage rounds every element of an input, in pieces on every thread") {
    // 10007 elements: pieces of 4096 (op_registry.hpp's finish_piece) and a tail, split between threads.
    constexpr int64_t count = 10007;
    ModelBuilder m(13);
    m.input("x", DataType::float32, {count})
        .initializer("k", Tensor::from<float>({}, {3.0f}))
        .output("y")
        .node("Div", {"x", "k"}, {"t"})
        .node("Mul", {"t", "k"}, {"y"});
    std::vector<float> values(count);
    for (int64_t i = 0; i < count; ++i) values[static_cast<std::size_t>(i)] = 0.1f + 0.37f * static_cast<float>(i);
    const auto x = Tensor::from<float>({count}, values);
    for (const std::size_t threads : {1, 3}) {
      CAPTURE(threads);
      const Tensor half = run_one(m.model(), {x}, {.threads = threads, .float16_activations = true});
      std::size_t wrong = 0, unrounded_differs = 0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        const float xi = round_to_half(values[i]);
        const float want = round_to_half(round_to_half(xi / 3.0f) * 3.0f);
        wrong += half.values<float>()[i] != want ? 1 : 0;
        unrounded_differs += round_to_half(round_to_half(values[i] / 3.0f) * 3.0f) != want ? 1 : 0;
      }
      CHECK(wrong == 0);
      CHECK(unrounded_differs > 100);  // the input's rounding shows in every piece
    }
  }

  TEST_CASE("float16 storage: inputs already rounded run as they are, and runs that round them still copy") {
    ModelBuilder m(13);
    m.input("x", DataType::float32, {5})
        .initializer("k", Tensor::from<float>({}, {3.0f}))
        .output("y")
        .node("Div", {"x", "k"}, {"t"})
        .node("Mul", {"t", "k"}, {"y"});
    const std::vector<float> values{0.1f, 1000.1f, -7.3f, 1e-6f, 65519.0f};
    std::vector<float> rounded = values;
    round_to_half(rounded.data(), rounded.size());
    Session session(m.model(), {.threads = 2, .float16_activations = true});
    const Tensor want = session.run(std::vector{Tensor::from<float>({5}, values)})[0];
    Tensor caller = Tensor::from<float>({5}, rounded);
    const Tensor as_given = session.run_views(std::span(&caller, 1), Session::Inputs::already_rounded)[0].clone();
    CHECK(std::memcmp(as_given.raw(), want.raw(), want.bytes()) == 0);
    // A run that rounds copies into its own memory, not into the memory the run before took as it was.
    const std::vector<float> other{2.2f, -0.3f, 11.1f, 5e-5f, 0.7f};
    const Tensor again = session.run(std::vector{Tensor::from<float>({5}, other)})[0];
    CHECK(std::memcmp(caller.raw(), rounded.data(), caller.bytes()) == 0);
    Session fresh(m.model(), {.threads = 2, .float16_activations = true});
    const Tensor want_other = fresh.run(std::vector{Tensor::from<float>({5}, other)})[0];
    CHECK(std::memcmp(again.raw(), want_other.raw(), want_other.bytes()) == 0);
#if !defined(NDEBUG)
    Tensor unrounded = Tensor::from<float>({5}, values);
    CHECK_THROWS_WITH_AS(session.run_views(std::span(&unrounded, 1), Session::Inputs::already_rounded),
                         "input 'x' was given as rounded to float16 and is not", EngineError);
#endif
  }

  TEST_CASE("float16 activation storage rounds a Clip's bound") {
    // 0.1 is no float16: the Clip's outputs at its bound are rounded as stored (by the kernel, in its pieces).
    ModelBuilder m(13);
    m.input("x", DataType::float32, {4})
        .initializer("lo", Tensor::from<float>({}, {-0.1f}))
        .initializer("hi", Tensor::from<float>({}, {0.1f}))
        .initializer("k", Tensor::from<float>({4}, {3, 3, 3, 3}))
        .output("y")
        .node("Clip", {"x", "lo", "hi"}, {"c"})
        .node("Mul", {"c", "k"}, {"y"});
    const auto x = Tensor::from<float>({4}, {1.0f, -2.0f, 0.05f, 7.0f});
    const Tensor half = run_one(m.model(), {x}, {.float16_activations = true});
    for (std::size_t i = 0; i < 4; ++i) {
      const float xi = round_to_half(x.values<float>()[i]);
      const float want = round_to_half(round_to_half(std::min(std::max(xi, -0.1f), 0.1f)) * 3.0f);
      CHECK(half.values<float>()[i] == want);
    }
    CHECK(half.values<float>()[0] != 0.3f);
  }

  TEST_CASE("float16 storage: an operator that only moves values rounds what it takes from a constant") {
    // Concat of a computed value (a float16 value already) and a constant: the constant's 0.1 and 1000.1 are not
    // float16 values, so the Concat's output is rounded; a Reshape of float16 values is not rounded again (the
    // same bits either way).
    ModelBuilder m(13);
    m.input("x", DataType::float32, {2})
        .initializer("k", Tensor::from<float>({3}, {0.1f, 1000.1f, 0.5f}))
        .initializer("shape", Tensor::from<int64_t>({2}, {5, 1}))
        .output("y")
        .node("Relu", {"x"}, {"r"})
        .node("Concat", {"r", "k"}, {"c"}, {attr("axis", int64_t{0})})
        .node("Reshape", {"c", "shape"}, {"y"});
    const auto x = Tensor::from<float>({2}, {0.3f, 2.0f});
    const Tensor y = run_one(m.model(), {x}, {.float16_activations = true});
    const float want[] = {round_to_half(0.3f), 2.0f, round_to_half(0.1f), round_to_half(1000.1f), 0.5f};
    REQUIRE(y.elements() == 5);
    for (std::size_t i = 0; i < 5; ++i) CHECK(y.values<float>()[i] == want[i]);
  }

  TEST_CASE("constant subgraphs are folded while planning") {
    ModelBuilder m(13);
    m.input("x", DataType::float32, {3})
        .initializer("a", Tensor::from<float>({3}, {1, 2, 3}))
        .initializer("b", Tensor::from<float>({3}, {4, 5, 6}))
        .output("y")
        .node("Mul", {"a", "b"}, {"ab"})
        .node("Sqrt", {"ab"}, {"r"})
        .node("Add", {"x", "r"}, {"y"});
    Session s(m.model());
    const auto y = s.run(std::vector{Tensor::from<float>({3}, {0, 0, 0})});
    CHECK(s.stats().folded_nodes == 2);
    CHECK(s.stats().steps == 1);
    CHECK(y[0].values<float>()[2] == doctest::Approx(std::sqrt(18.0f)));
  }

  TEST_CASE("graph outputs that are inputs or constants, and several outputs") {
    ModelBuilder m(13);
    m.input("x", DataType::float32, {2})
        .initializer("c", Tensor::from<float>({1}, {7}))
        .output("x")
        .output("c")
        .output("y")
        .node("Add", {"x", "c"}, {"y"});
    const auto out = Session(m.model()).run(std::vector{Tensor::from<float>({2}, {1, 2})});
    REQUIRE(out.size() == 3);
    CHECK(out[0].values<float>()[1] == 2.0f);
    CHECK(out[1].values<float>()[0] == 7.0f);
    CHECK(out[2].values<float>()[1] == 9.0f);
    CHECK(out[2].owns_storage());
  }
}
