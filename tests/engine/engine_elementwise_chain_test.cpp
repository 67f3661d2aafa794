// Element-wise chains on one quantized input run as a table (host/engine/elementwise_chain.hpp;
// docs/runtime-extensions.md, "Element-wise chains"): the same bits as each operator run alone
// (SessionOptions::chain_elementwise off), with float16 storage and with an output rounding of its own per value, on 1
// to 7 threads; and the chains the search may take, and not more. The table looked up as bytes (an int8 output grid)
// gives the float table's values, where the CPU can and for every table it takes. Both lookups leave the upper halves
// of the vector registers unused.

#include "byte_table.hpp"
#include "elementwise_chain.hpp"
#include "engine_test_model.hpp"
#include "scoped_env.hpp"
#include "vector_state.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

// x [2, 7, 37, 41] (21238 values: a part of the pool of 4854, not a whole number of AVX-512 lanes) -> a HardSwish
// written out (Add 3, Clip 0..6, Mul by x, Div by 6) -> a scalar affine block (Mul, Add) -> y. `extra` adds nodes.
onnx::ModelProto hard_swish_chain(void (*extra)(ModelBuilder&) = nullptr) {
  ModelBuilder m(13);
  m.input("x", DataType::float32, {2, 7, 37, 41})
      .initializer("three", Tensor::from<float>({}, {3.0f}))
      .initializer("zero", Tensor::from<float>({}, {0.0f}))
      .initializer("six", Tensor::from<float>({}, {6.0f}))
      .initializer("scale", Tensor::from<float>({1}, {0.7f}))
      .initializer("shift", Tensor::from<float>({1, 1, 1, 1}, {-0.1f}))
      .node("Add", {"x", "three"}, {"t"})
      .node("Clip", {"t", "zero", "six"}, {"c"})
      .node("Mul", {"x", "c"}, {"m"})
      .node("Div", {"m", "six"}, {"h"})
      .node("Mul", {"scale", "h"}, {"s"})
      .node("Add", {"s", "shift"}, {"y"})
      .output("y");
  if (extra != nullptr) extra(m);
  return m.model();
}

void c_is_an_output(ModelBuilder& m) { m.output("c"); }
void m_read_by_a_sigmoid(ModelBuilder& m) { m.node("Sigmoid", {"m"}, {"g"}).output("g"); }
void relu_after(ModelBuilder& m) { m.node("Relu", {"y"}, {"r"}).node("Sub", {"r", "x"}, {"d"}).output("d"); }

// A rounding per value, as a quantized run's grids: value i to multiples of 2^-(4 + i % 5).
void round_per_value(ValueId id, std::span<float> values) {
  const float step = std::ldexp(1.0f, -(4 + static_cast<int>(id) % 5));
  for (float& v : values) v = std::nearbyint(v / step) * step;
}

// x's int8 grid: zero point 3 and scale 0.05, or 1/16 where x is stored as float16 (each of its values then is a
// float16 too); the input holds its values only, as a quantized run's do.
IntegerGrid x_grid(bool half) { return IntegerGrid{{half ? 0.0625f : 0.05f}, {3}, 0, -128, 127}; }

Tensor grid_input(bool half) {
  const float scale = x_grid(half).scale[0];
  Tensor x(DataType::float32, {2, 7, 37, 41});
  std::mt19937 random(5);
  std::uniform_int_distribution<int32_t> integer(-128, 127);
  for (float& v : x.values<float>()) v = static_cast<float>(static_cast<double>(scale) * (integer(random) - 3));
  return x;
}

// y's own int8 grid, for the last test: zero point -7, scale 0.03; a rounding that puts y on it and leaves the
// other values as they are.
constexpr float y_scale = 0.03f;
constexpr int32_t y_zero = -7;
void round_y_to_int8(ValueId, std::span<float> values) {
  for (float& v : values) {
    const float q = std::clamp(std::nearbyint(v / y_scale) + static_cast<float>(y_zero), -128.0f, 127.0f);
    v = static_cast<float>(q - static_cast<float>(y_zero)) * y_scale;
  }
}

struct Run {
  std::vector<Tensor> outputs;
  std::size_t chains = 0, steps = 0;
};

// int8_y: y has an int8 grid that the rounding keeps (the byte lookup's case) instead of the rounding per value.
Run run(const onnx::ModelProto& model, bool chain, std::size_t threads, bool half, bool rounding, bool grid = true,
        bool int8_y = false) {
  Graph graph(model);
  if (grid) graph.set_integer_grid(*graph.find("x"), x_grid(half));
  const ValueId y = *graph.find("y");
  if (int8_y) graph.set_integer_grid(y, IntegerGrid{{y_scale}, {y_zero}, 0, -128, 127});
  Session session(
      std::move(graph),
      SessionOptions{.threads = test_threads(threads), .float16_activations = half, .chain_elementwise = chain});
  if (int8_y) {
    session.set_output_rounding([y](ValueId id, std::span<float> values) {
      if (id == y) round_y_to_int8(id, values);
    });
  } else if (rounding) {
    session.set_output_rounding(round_per_value);
  }
  Run r;
  r.outputs = session.run(std::vector<Tensor>{grid_input(half)});
  r.chains = session.stats().elementwise_chains;
  r.steps = session.stats().steps;
  return r;
}

// The chained run gives the unchained run's bits, with `chains` chains.
void check_chains(const onnx::ModelProto& model, std::size_t chains, bool grid = true, bool int8_y = false) {
  for (const std::size_t threads : test_thread_counts({1, 2, 7}))
    for (const bool half : {false, true})
      for (const bool rounding : {false, true}) {
        CAPTURE(threads);
        CAPTURE(half);
        CAPTURE(rounding);
        const Run alone = run(model, false, threads, half, rounding, grid, int8_y);
        const Run chained = run(model, true, threads, half, rounding, grid, int8_y);
        CHECK(alone.chains == 0);
        CHECK(chained.chains == chains);
        REQUIRE(chained.outputs.size() == alone.outputs.size());
        for (std::size_t o = 0; o < alone.outputs.size(); ++o)
          CHECK(std::memcmp(chained.outputs[o].raw(), alone.outputs[o].raw(), alone.outputs[o].bytes()) == 0);
      }
}

// What makes "p" in produced_chain: an Add, which rounds its output in pieces as it writes them
// (PreparedOp::finishes_output); a Transpose, which leaves that to the session's pass after it; a Conv 3x3, which
// rounds each band of rows it writes while its other bands still read the input's rows around theirs.
enum class Producer { add, transpose, conv };

// x, z [2, 7, 37, 41] -> the producer -> "p" -> the HardSwish written out -> "y"; "p" also a graph output when
// `p_out`. The producer runs the chain on each piece of "p" as it rounds it.
onnx::ModelProto produced_chain(Producer producer, bool p_out) {
  ModelBuilder m(13);
  m.input("x", DataType::float32, {2, 7, 37, 41})
      .input("z", DataType::float32, {2, 7, 37, 41})
      .initializer("w", random_tensor({7, 7, 3, 3}, 4))
      .initializer("three", Tensor::from<float>({}, {3.0f}))
      .initializer("zero", Tensor::from<float>({}, {0.0f}))
      .initializer("six", Tensor::from<float>({}, {6.0f}));
  switch (producer) {
    case Producer::add: m.node("Add", {"x", "z"}, {"p"}); break;
    case Producer::transpose:
      m.node("Transpose", {"x"}, {"p"}, {attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
      break;
    case Producer::conv: m.node("Conv", {"x", "w"}, {"p"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}); break;
  }
  m.node("Add", {"p", "three"}, {"t"})
      .node("Clip", {"t", "zero", "six"}, {"c"})
      .node("Mul", {"p", "c"}, {"m"})
      .node("Div", {"m", "six"}, {"y"})
      .output("y");
  if (p_out) m.output("p");
  return m.model();
}

// x, z [2, 7, 37, 41] -> Conv 3x3 (x) -> "p" -> an element-wise operator on "p" (and z, or values of one element)
// -> "y"; "p" also a graph output when `p_out`. No grids: the operator runs in the Conv's bands as one step of its
// own would, on float32 values, float16 ones, or values rounded per value.
onnx::ModelProto conv_then(const char* op, bool p_out) {
  ModelBuilder m(13);
  m.input("x", DataType::float32, {2, 7, 37, 41})
      .input("z", DataType::float32, {2, 7, 37, 41})
      .initializer("w", random_tensor({7, 7, 3, 3}, 4))
      .initializer("lo", Tensor::from<float>({}, {-0.5f}))
      .initializer("hi", Tensor::from<float>({}, {0.75f}))
      .node("Conv", {"x", "w"}, {"p"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
  const std::string name = op;
  if (name == "Clip") {
    m.node("Clip", {"p", "lo", "hi"}, {"y"});
  } else if (name == "Sub") {
    m.node("Sub", {"z", "p"}, {"y"});  // the Conv's output second
  } else {
    m.node(op, {"p", "z"}, {"y"});
  }
  m.output("y");
  if (p_out) m.output("p");
  return m.model();
}

}  // namespace

TEST_SUITE("engine.elementwise_chain") {
  TEST_CASE("an element-wise operator right after the step that makes its input runs in that step: same bits") {
    // In NCHW every value has one layout. Kept NHWC, the binaries read "p" in NHWC and z in NCHW: no place is then
    // the same in both, and the operator runs as its own step (same bits either way).
    for (const char* layout : {"nchw", "blocked"})
      for (const char* op : {"Add", "Sub", "Mul", "Clip"})
        for (const bool p_out : {false, true})
          for (const std::size_t threads : test_thread_counts({1, 2, 7}))
            for (const bool half : {false, true})
              for (const bool rounding : {false, true}) {
                const std::string name = op;
                const ScopedEnv env("RKNNXX_ENGINE_LAYOUT", layout);
                CAPTURE(layout);
                CAPTURE(name);
                CAPTURE(p_out);
                CAPTURE(threads);
                CAPTURE(half);
                CAPTURE(rounding);
                const auto run_model = [&](bool follow) {
                  Session session(conv_then(op, p_out),
                                  SessionOptions{.threads = test_threads(threads),
                                                 .float16_activations = half,
                                                 .fuse = false,  // the Clip stays a step
                                                 .chain_elementwise = follow});
                  if (rounding) session.set_output_rounding(round_per_value);
                  std::vector<Tensor> outputs = session.run(
                      std::vector<Tensor>{random_tensor({2, 7, 37, 41}, 1), random_tensor({2, 7, 37, 41}, 2)});
                  const bool one_layout = std::string(layout) == "nchw" || p_out || name == "Clip";
                  if (one_layout || !follow) CHECK(session.stats().steps_run_by_producers == (follow ? 1 : 0));
                  CHECK(session.stats().steps == 2);  // the follower's step stays, at about no time
                  return outputs;
                };
                const std::vector<Tensor> alone = run_model(false), followed = run_model(true);
                REQUIRE(followed.size() == alone.size());
                for (std::size_t o = 0; o < alone.size(); ++o)
                  CHECK(std::memcmp(followed[o].raw(), alone[o].raw(), alone[o].bytes()) == 0);
              }
  }

  TEST_CASE("a chain right after the step that makes its input runs in that step, on each piece it stores: same bits") {
    // y_int8_one_pass: y_int8, with a rounding that also looks p's rounded values up in y's byte table in the same
    // pass (Session::OutputRoundingWithLookup), as a quantized session's does.
    enum class Rounding { none, per_value, y_int8, y_int8_one_pass };
    for (const Producer producer : {Producer::add, Producer::transpose, Producer::conv})
      for (const bool p_out : {false, true})
        for (const std::size_t threads : test_thread_counts({1, 2, 7}))
          for (const bool half : {false, true})
            for (const Rounding rounding :
                 {Rounding::none, Rounding::per_value, Rounding::y_int8, Rounding::y_int8_one_pass}) {
              CAPTURE(static_cast<int>(producer));
              CAPTURE(p_out);
              CAPTURE(threads);
              CAPTURE(half);
              CAPTURE(static_cast<int>(rounding));
              const auto run_chained = [&](bool chain) {
                Graph graph(produced_chain(producer, p_out));
                const ValueId p = *graph.find("p"), y = *graph.find("y");
                const IntegerGrid grid = x_grid(half);
                graph.set_integer_grid(p, grid);
                const bool y_int8 = rounding == Rounding::y_int8 || rounding == Rounding::y_int8_one_pass;
                if (y_int8) graph.set_integer_grid(y, IntegerGrid{{y_scale}, {y_zero}, 0, -128, 127});
                Session session(std::move(graph),
                                SessionOptions{.threads = test_threads(threads),
                                               .float16_activations = half,
                                               .fuse = false,  // as a quantized graph: HardSwish stays apart
                                               .chain_elementwise = chain});
                // "p" on its grid (the Add's sums leave it), the other values as `rounding` says.
                const auto round = [&, p, y](ValueId id, std::span<float> values) {
                  if (id == p) {
                    const float s = grid.scale[0];
                    for (float& v : values) v = (std::clamp(std::nearbyint(v / s) + 3.0f, -128.0f, 127.0f) - 3.0f) * s;
                  } else if (rounding == Rounding::per_value) {
                    round_per_value(id, values);
                  } else if (y_int8 && id == y) {
                    round_y_to_int8(id, values);
                  }
                };
                // p's rounding again, from the grid the session hands over, and the table's values written out.
                std::atomic<int> one_pass_calls = 0;
                const auto round_and_look_up = [&, p](ValueId id, std::span<float> values, const RoundedLookup& l) {
                  if (id != p) return false;
                  ++one_pass_calls;
                  for (std::size_t i = 0; i < values.size(); ++i) {
                    const float q =
                        std::clamp(std::nearbyint(values[i] / l.grid_scale) + static_cast<float>(l.grid_zero),
                                   static_cast<float>(l.least), static_cast<float>(l.most));
                    values[i] = (q - static_cast<float>(l.grid_zero)) * l.grid_scale;
                    const auto entry = static_cast<std::size_t>(static_cast<int32_t>(q) - l.least);
                    l.out[i] = static_cast<float>(l.bytes[entry] - l.zero_point) * l.scale;
                  }
                  return true;
                };
                if (rounding == Rounding::y_int8_one_pass) session.set_output_rounding(round, round_and_look_up);
                else session.set_output_rounding(round);
                Tensor z = grid_input(half);
                std::reverse(z.values<float>().begin(), z.values<float>().end());
                std::vector<Tensor> outputs = session.run(std::vector<Tensor>{grid_input(half), z});
                CHECK(session.stats().steps_run_by_producers == (chain ? 1 : 0));
                if (chain) CHECK(session.stats().steps == 2);
                // One pass where the chain is on bytes (y's int8 grid) and nothing rounds p to float16 first (with
                // float16 storage, a Transpose's p is float16 already and also takes it).
                // (Tables on bytes need AVX512-VBMI; elsewhere the session makes the two passes.)
                const bool one_pass = chain && rounding == Rounding::y_int8_one_pass && cpu_has_byte_permutes();
                if (!one_pass || !half) CHECK((one_pass_calls > 0) == one_pass);
                return outputs;
              };
              const std::vector<Tensor> alone = run_chained(false), chained = run_chained(true);
              REQUIRE(chained.size() == alone.size());
              for (std::size_t o = 0; o < alone.size(); ++o)
                CHECK(std::memcmp(chained[o].raw(), alone[o].raw(), alone[o].bytes()) == 0);
            }
  }

  TEST_CASE("a chain on a graph input has no producer: it runs as its own step") {
    Graph graph(hard_swish_chain());
    graph.set_integer_grid(*graph.find("x"), x_grid(false));
    Session session(std::move(graph), SessionOptions{.threads = 1});
    session.run(std::vector<Tensor>{grid_input(false)});
    CHECK(session.stats().elementwise_chains == 1);
    CHECK(session.stats().steps_run_by_producers == 0);
  }

  TEST_CASE("a HardSwish written out and an affine block on one quantized value run as one table, same bits") {
    check_chains(hard_swish_chain(), 1);
    const Run chained = run(hard_swish_chain(), true, 1, false, false);
    CHECK(chained.steps == 1);  // six operators, one step
  }

  TEST_CASE("a chain ends at a value read outside it, and needs one quantized input") {
    check_chains(hard_swish_chain(c_is_an_output), 1);       // Add, Clip; then Mul reads x and c: not one input
    check_chains(hard_swish_chain(m_read_by_a_sigmoid), 1);  // Add, Clip, Mul; then Div reads m: no grid
    check_chains(hard_swish_chain(relu_after), 1);           // the six; then Relu and Sub read y and x
    check_chains(hard_swish_chain(), 0, false);              // x without a grid
  }

  TEST_CASE("one-input operators join a chain: Sigmoid, Tanh, HardSwish") {
    ModelBuilder m(14);
    m.input("x", DataType::float32, {2, 7, 37, 41})
        .node("Sigmoid", {"x"}, {"s"})
        .node("Tanh", {"s"}, {"t"})
        .node("HardSwish", {"t"}, {"y"})
        .output("y");
    check_chains(m.model(), 1);
  }

  TEST_CASE("an observer sees every value: no chains then") {
    Graph graph(hard_swish_chain());
    graph.set_integer_grid(*graph.find("x"), x_grid(false));
    Session session(std::move(graph), SessionOptions{.threads = 1});
    std::size_t seen = 0;
    session.set_step_observer([&](const Node&, std::span<Tensor* const>) { ++seen; });
    const auto observed = session.run(std::vector<Tensor>{grid_input(false)});
    CHECK(seen == 6);
    CHECK(session.stats().elementwise_chains == 0);
    const Run chained = run(hard_swish_chain(), true, 1, false, false);
    CHECK(std::memcmp(observed[0].raw(), chained.outputs[0].raw(), observed[0].bytes()) == 0);
  }

  TEST_CASE("a chain is profiled as one step, named by its last operator") {
    Graph graph(hard_swish_chain());
    graph.set_integer_grid(*graph.find("x"), x_grid(false));
    Session session(std::move(graph), SessionOptions{.threads = 1, .profile = true});
    session.run(std::vector<Tensor>{grid_input(false)});
    REQUIRE(session.last_profile().size() == 1);
    CHECK(session.last_profile()[0].op_type == "ElementwiseChain");
    CHECK(session.last_profile()[0].node.find("and the 5 element-wise operators before it") != std::string::npos);
  }

  TEST_CASE("a chain whose output has an int8 grid gives the same bits (its table looked up as bytes)") {
    check_chains(hard_swish_chain(), 1, true, true);
  }

  TEST_CASE("a table on an int8 output grid is looked up as bytes where the CPU can: the float table's values") {
    // x on an int8 grid of zero point 3, with values off the grid's range (clamped), NaN (read as the zero point)
    // and a count that is not a whole number of 64-element steps; the table: y's grid values.
    const std::size_t count = 64 * 37 + 29;
    Tensor x(DataType::float32, {static_cast<int64_t>(count)});
    std::mt19937 random(11);
    std::uniform_int_distribution<int32_t> integer(-140, 140);
    for (float& v : x.values<float>()) v = static_cast<float>(0.05 * (integer(random) - 3));
    x.values<float>()[5] = std::numeric_limits<float>::quiet_NaN();
    x.values<float>()[count - 1] = std::numeric_limits<float>::quiet_NaN();
    x.values<float>()[100] = std::numeric_limits<float>::infinity();
    x.values<float>()[101] = -std::numeric_limits<float>::infinity();
    const ChainInput input{&x, 0.05f, 3, -128, 127};
    std::vector<float> table(256);
    for (std::size_t k = 0; k < table.size(); ++k)
      table[k] = static_cast<float>(static_cast<int32_t>((k * 89 + 17) % 256) - 128 - y_zero) * y_scale;
    const auto expected = [&](float v) {  // the float table at v's integer, the rule of look_up_table
      float t = v == v ? v * (1.0f / 0.05f) : 0.0f;
      t = std::clamp(t, -131.0f, 124.0f);
      return table[static_cast<std::size_t>(static_cast<int32_t>(std::nearbyint(t)) + 131)];
    };
    const ChainOutputGrid y_grid{y_scale, y_zero};
    for (const std::size_t threads : test_thread_counts({1, 2, 7})) {
      CAPTURE(threads);
      ThreadPool pool(threads);
      for (const bool on_grid : {true, false}) {
        CAPTURE(on_grid);
        std::vector<float> t = table;
        if (!on_grid) t[77] = -0.0f;  // not y_scale * (q - y_zero) for any q: the floats are looked up
        Tensor y(DataType::float32, {static_cast<int64_t>(count)});
        const bool bytes = look_up_table(t, input, y_grid, y, pool);
        CHECK(bytes == (on_grid && cpu_has_byte_permutes()));
        std::swap(table, t);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < count; ++i) {
          const float want = expected(x.values<float>()[i]);
          wrong += std::memcmp(&want, &y.values<float>()[i], sizeof want) != 0 ? 1 : 0;
        }
        std::swap(table, t);
        CHECK(wrong == 0);
      }
      // Without an output grid, or one the table is not on, the floats are looked up.
      Tensor y(DataType::float32, {static_cast<int64_t>(count)});
      CHECK_FALSE(look_up_table(table, input, ChainOutputGrid{}, y, pool));
      CHECK_FALSE(look_up_table(table, input, ChainOutputGrid{y_scale * 2.0f, y_zero}, y, pool));
    }
  }

  TEST_CASE("a chain's table is kept between runs, and made again when a one-element input or the rounding changes") {
    // y = Clip(x * k + 1, 0, 6), k an input of one element: its table holds k's value.
    ModelBuilder m(13);
    m.input("x", DataType::float32, {2, 7, 37, 41})
        .input("k", DataType::float32, {1})
        .initializer("one", Tensor::from<float>({}, {1.0f}))
        .initializer("zero", Tensor::from<float>({}, {0.0f}))
        .initializer("six", Tensor::from<float>({}, {6.0f}))
        .node("Mul", {"x", "k"}, {"t"})
        .node("Add", {"t", "one"}, {"u"})
        .node("Clip", {"u", "zero", "six"}, {"y"})
        .output("y");
    const onnx::ModelProto model = m.model();
    const auto session = [&](bool chain) {
      Graph graph(model);
      graph.set_integer_grid(*graph.find("x"), x_grid(false));
      return Session(std::move(graph), SessionOptions{.threads = 1, .chain_elementwise = chain});
    };
    Session chained = session(true), alone = session(false);
    const auto same = [&](float k) {
      const std::vector<Tensor> inputs{grid_input(false), Tensor::from<float>({1}, {k})};
      const Tensor got = chained.run(inputs)[0];
      const Tensor want = alone.run(inputs)[0];
      return std::memcmp(got.raw(), want.raw(), want.bytes()) == 0;
    };
    CHECK(same(0.5f));
    CHECK(chained.stats().elementwise_chains == 1);
    CHECK(same(0.5f));  // the kept table
    CHECK(same(-2.0f));
    CHECK(same(0.5f));
    for (Session* s : {&chained, &alone}) s->set_output_rounding(round_per_value);
    CHECK(same(0.5f));
    for (Session* s : {&chained, &alone}) s->set_output_rounding(round_y_to_int8);
    CHECK(same(0.5f));
    CHECK(same(3.0f));
  }

  TEST_CASE("the lookups leave the upper halves of the vector registers unused, for the SSE code after them") {
    const std::optional<bool> before = rknnxx::test::upper_vector_halves_in_use();
    if (!before) {
      MESSAGE("this CPU does not report the vector state: nothing to check");
      return;
    }
    REQUIRE_FALSE(*before);
    // 29 elements past the last full step of 64: the tails run too.
    Tensor x(DataType::float32, {64 * 3 + 29});
    for (std::size_t i = 0; i < static_cast<std::size_t>(x.elements()); ++i)
      x.values<float>()[i] = static_cast<float>(0.05 * (static_cast<int32_t>(i % 256) - 131));
    const ChainInput input{&x, 0.05f, 3, -128, 127};
    std::vector<float> table(256);
    for (std::size_t k = 0; k < table.size(); ++k)
      table[k] = static_cast<float>(static_cast<int32_t>(k) - 128 - y_zero) * y_scale;
    ThreadPool pool(1);  // the lookups run on this thread
    Tensor y(DataType::float32, x.shape());
    for (const ChainOutputGrid grid : {ChainOutputGrid{}, ChainOutputGrid{y_scale, y_zero}}) {
      const bool bytes = look_up_table(table, input, grid, y, pool);
      CAPTURE(bytes);
      CHECK_FALSE(rknnxx::test::upper_vector_halves_in_use().value());
    }
  }
}
