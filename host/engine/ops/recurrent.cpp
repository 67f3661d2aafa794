// The recurrent layers RNN, GRU and LSTM (float32; forward, reverse or bidirectional; layout 0
// [seq, batch, ...] or 1 [batch, seq, ...]; per-batch sequence_lens; the activation list, clip,
// LSTM peepholes and input_forget, GRU linear_before_reset).
//
// On the GEMM path: the input projection of every time step is one matrix product
// X * W^T before the loop, and each step multiplies the hidden state by R^T for all batch rows
// at once; only the gate arithmetic runs element by element.
//
// Gate order in W, R and B as ONNX defines it: GRU z, r, h; LSTM i, o, f, c; peepholes P i, o, f.

#include "../gemm.hpp"
#include "../op_registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rknnxx::host {
namespace {

enum class Cell { rnn, gru, lstm };

constexpr int64_t gates_of(Cell c) { return c == Cell::rnn ? 1 : (c == Cell::gru ? 3 : 4); }

struct Activation {
  enum class Kind {
    sigmoid,
    tanh,
    relu,
    affine,
    leaky_relu,
    thresholded_relu,
    scaled_tanh,
    hard_sigmoid,
    elu,
    softsign,
    softplus
  };
  Kind kind = Kind::sigmoid;
  float alpha = 0.0f;
  float beta = 0.0f;

  float operator()(float x) const {
    switch (kind) {
      case Kind::sigmoid: return 1.0f / (1.0f + std::exp(-x));
      case Kind::tanh: return std::tanh(x);
      case Kind::relu: return std::max(x, 0.0f);
      case Kind::affine: return alpha * x + beta;
      case Kind::leaky_relu: return x < 0.0f ? alpha * x : x;
      case Kind::thresholded_relu: return x > alpha ? x : 0.0f;
      case Kind::scaled_tanh: return alpha * std::tanh(beta * x);
      case Kind::hard_sigmoid: return std::clamp(alpha * x + beta, 0.0f, 1.0f);
      case Kind::elu: return x < 0.0f ? alpha * (std::exp(x) - 1.0f) : x;
      case Kind::softsign: return x / (1.0f + std::fabs(x));
      case Kind::softplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// The activations of every direction from the attributes, alphas and betas consumed in order by
// the activations that take them (as ONNX Runtime does), with ONNX's defaults for each.
std::vector<Activation> activations_of(const OpContext& ctx, Cell cell, int64_t directions) {
  using K = Activation::Kind;
  struct Named {
    std::string_view name;
    K kind;
    int uses;  // 0: none, 1: alpha, 2: alpha and beta
    float alpha, beta;
  };
  static constexpr Named table[] = {
      {"Sigmoid", K::sigmoid, 0, 0, 0},
      {"Tanh", K::tanh, 0, 0, 0},
      {"Relu", K::relu, 0, 0, 0},
      {"Affine", K::affine, 2, 1.0f, 0.0f},
      {"LeakyRelu", K::leaky_relu, 1, 0.01f, 0},
      {"ThresholdedRelu", K::thresholded_relu, 1, 1.0f, 0},
      {"ScaledTanh", K::scaled_tanh, 2, 1.0f, 1.0f},
      {"HardSigmoid", K::hard_sigmoid, 2, 0.2f, 0.5f},
      {"Elu", K::elu, 1, 1.0f, 0},
      {"Softsign", K::softsign, 0, 0, 0},
      {"Softplus", K::softplus, 0, 0, 0},
  };
  const std::vector<std::string> defaults = cell == Cell::rnn ? std::vector<std::string>{"Tanh"}
      : cell == Cell::gru                                     ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                              : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<std::string> names;
  if (const auto* a = ctx.attribute("activations"); a != nullptr) {
    names = a->strings;
  } else {
    for (int64_t d = 0; d < directions; ++d) {
      names.insert(names.end(), defaults.begin(), defaults.end());
    }
  }
  if (names.size() != defaults.size() * static_cast<std::size_t>(directions)) {
    ctx.fail("attribute 'activations' lists {} functions, expected {} per direction", names.size(), defaults.size());
  }
  const auto alphas = ctx.attr_floats("activation_alpha");
  const auto betas = ctx.attr_floats("activation_beta");
  std::size_t next_alpha = 0;
  std::size_t next_beta = 0;
  std::vector<Activation> result;
  for (const auto& name : names) {
    const auto* it = std::find_if(std::begin(table), std::end(table), [&](const Named& n) { return n.name == name; });
    if (it == std::end(table)) {
      ctx.fail("activation '{}' is not supported", name);
    }
    Activation a{it->kind, it->alpha, it->beta};
    if (it->uses >= 1 && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (it->uses >= 2 && next_beta < betas.size()) a.beta = betas[next_beta++];
    result.push_back(a);
  }
  return result;
}

struct RecurrentPlan {
  Cell cell = Cell::rnn;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool reverse_only = false;  // direction "reverse"
  bool batch_major = false;   // layout 1
  bool input_forget = false;
  bool linear_before_reset = false;
  float clip = 0.0f;  // 0: none
  std::vector<Activation> activations;

  int64_t gates() const { return gates_of(cell); }
  int64_t row(int64_t t, int64_t b) const { return batch_major ? b * seq + t : t * batch + b; }
  // Offset of the state of direction d, batch row b in initial_h/c and Y_h/c: [directions,
  // batch, hidden], or [batch, directions, hidden] in layout 1.
  int64_t state_offset(int64_t d, int64_t b) const {
    return (batch_major ? b * directions + d : d * batch + b) * hidden;
  }
};

void run_direction(const RecurrentPlan& p, KernelContext& k, int64_t d, bool reverse, float* scratch) {
  const int64_t G = p.gates();
  const int64_t H = p.hidden;
  const int64_t GH = G * H;
  float* xw = scratch;                       // [seq * batch, G*H]: X * W^T + Wb + Rb
  float* gates = xw + p.seq * p.batch * GH;  // [batch, G*H]: H_prev * R^T
  float* h = gates + p.batch * GH;           // [batch, H]
  float* c = h + p.batch * H;                // [batch, H] (LSTM)
  float* rh = c + p.batch * H;               // [batch, H] (GRU: r * H_prev, or the new h)

  const float* x = k.input(0).data<float>();
  const float* w = k.input(1).data<float>() + d * GH * p.input;
  const float* r = k.input(2).data<float>() + d * GH * H;
  const Tensor* bias = k.optional_input(3);
  const float* wb = bias != nullptr ? bias->data<float>() + d * 2 * GH : nullptr;
  const float* rb = wb != nullptr ? wb + GH : nullptr;
  const Tensor* lens = k.optional_input(4);
  const Tensor* h0 = k.optional_input(5);
  const Tensor* c0 = p.cell == Cell::lstm ? k.optional_input(6) : nullptr;
  const Tensor* peep = p.cell == Cell::lstm ? k.optional_input(7) : nullptr;
  const float* pi = peep != nullptr ? peep->data<float>() + d * 3 * H : nullptr;
  const float* po = pi != nullptr ? pi + H : nullptr;
  const float* pf = pi != nullptr ? pi + 2 * H : nullptr;
  const std::size_t acts = p.cell == Cell::rnn ? 1 : (p.cell == Cell::gru ? 2 : 3);
  const Activation f = p.activations[static_cast<std::size_t>(d) * acts];
  const Activation g = acts > 1 ? p.activations[static_cast<std::size_t>(d) * acts + 1] : f;
  const Activation hact = acts > 2 ? p.activations[static_cast<std::size_t>(d) * acts + 2] : f;
  const auto clip = [&](float v) { return p.clip > 0.0f ? std::clamp(v, -p.clip, p.clip) : v; };

  // The input projection of all steps; the biases are added here, except GRU's Rbh when
  // linear_before_reset (it belongs inside r * (...)) or not (then it is added to (r*H)*Rh).
  parallel_gemm(k.pool, false, true, p.seq * p.batch, GH, p.input, 1.0f, x, p.input, w, p.input, 0.0f, xw, GH);
  if (wb != nullptr) {
    for (int64_t i = 0; i < p.seq * p.batch; ++i) {
      float* row = xw + i * GH;
      for (int64_t j = 0; j < GH; ++j) {
        const bool gru_h = p.cell == Cell::gru && j >= 2 * H;
        row[j] += wb[j] + (gru_h ? 0.0f : rb[j]);
      }
    }
  }
  const std::size_t row_bytes = static_cast<std::size_t>(H) * sizeof(float);
  for (int64_t b = 0; b < p.batch; ++b) {
    if (h0 != nullptr) {
      std::memcpy(h + b * H, h0->data<float>() + p.state_offset(d, b), row_bytes);
    } else {
      std::fill(h + b * H, h + (b + 1) * H, 0.0f);
    }
    if (c0 != nullptr) {
      std::memcpy(c + b * H, c0->data<float>() + p.state_offset(d, b), row_bytes);
    } else {
      std::fill(c + b * H, c + (b + 1) * H, 0.0f);
    }
  }
  std::vector<int64_t> length(static_cast<std::size_t>(p.batch), p.seq);
  if (lens != nullptr) {
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t v = lens->data<int32_t>()[b];
      if (v < 0 || v > p.seq) {
        throw EngineError(fmt::format("sequence_lens[{}] is {}, expected 0 to {}", b, v, p.seq));
      }
      length[static_cast<std::size_t>(b)] = v;
    }
  }
  float* y = k.outputs.empty() || k.outputs[0] == nullptr ? nullptr : k.output(0).data<float>();
  const auto y_at = [&](int64_t t, int64_t b) {
    return p.batch_major ? y + ((b * p.seq + t) * p.directions + d) * H
                         : y + ((t * p.directions + d) * p.batch + b) * H;
  };
  for (int64_t s = 0; s < p.seq; ++s) {
    // H_prev * R^T for every gate (GRU without linear_before_reset: z and r only matter here).
    parallel_gemm(k.pool, false, true, p.batch, GH, H, 1.0f, h, H, r, H, 0.0f, gates, GH);
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = length[static_cast<std::size_t>(b)];
      if (s >= len) {
        if (y != nullptr) std::fill(y_at(s, b), y_at(s, b) + H, 0.0f);
        continue;
      }
      const int64_t t = reverse ? len - 1 - s : s;
      const float* in = xw + p.row(t, b) * GH;
      float* gb = gates + b * GH;
      float* hb = h + b * H;
      float* cb = c + b * H;
      if (p.cell == Cell::rnn) {
        for (int64_t j = 0; j < H; ++j) {
          hb[j] = f(clip(in[j] + gb[j]));
        }
      } else if (p.cell == Cell::lstm) {
        for (int64_t j = 0; j < H; ++j) {
          const float c_prev = cb[j];
          const float i_gate = f(clip(in[j] + gb[j] + (pi != nullptr ? pi[j] * c_prev : 0.0f)));
          const float f_gate = p.input_forget
              ? 1.0f - i_gate
              : f(clip(in[2 * H + j] + gb[2 * H + j] + (pf != nullptr ? pf[j] * c_prev : 0.0f)));
          const float candidate = g(clip(in[3 * H + j] + gb[3 * H + j]));
          const float c_new = f_gate * c_prev + i_gate * candidate;
          const float o_gate = f(clip(in[H + j] + gb[H + j] + (po != nullptr ? po[j] * c_new : 0.0f)));
          cb[j] = c_new;
          hb[j] = o_gate * hact(c_new);
        }
      } else {  // GRU
        float* rb_out = rh + b * H;
        for (int64_t j = 0; j < H; ++j) {
          const float reset = f(clip(in[H + j] + gb[H + j]));
          if (p.linear_before_reset) {
            const float recurrent = gb[2 * H + j] + (rb != nullptr ? rb[2 * H + j] : 0.0f);
            rb_out[j] = g(clip(in[2 * H + j] + reset * recurrent));
          } else {
            rb_out[j] = reset * hb[j];  // (r * H_prev), multiplied by Rh below
          }
        }
        if (!p.linear_before_reset) {
          // (r * H_prev) * Rh^T for this batch row.
          gemm(false, true, 1, H, H, 1.0f, rb_out, H, r + 2 * H * H, H, 0.0f, gb + 2 * H, GH);
          for (int64_t j = 0; j < H; ++j) {
            rb_out[j] = g(clip(in[2 * H + j] + gb[2 * H + j] + (rb != nullptr ? rb[2 * H + j] : 0.0f)));
          }
        }
        for (int64_t j = 0; j < H; ++j) {
          const float update = f(clip(in[j] + gb[j]));
          hb[j] = (1.0f - update) * rb_out[j] + update * hb[j];
        }
      }
      if (y != nullptr) std::memcpy(y_at(t, b), hb, static_cast<std::size_t>(H) * sizeof(float));
    }
  }
  for (int64_t b = 0; b < p.batch; ++b) {
    if (k.outputs.size() > 1 && k.outputs[1] != nullptr) {
      std::memcpy(k.output(1).data<float>() + p.state_offset(d, b), h + b * H, row_bytes);
    }
    if (p.cell == Cell::lstm && k.outputs.size() > 2 && k.outputs[2] != nullptr) {
      std::memcpy(k.output(2).data<float>() + p.state_offset(d, b), c + b * H, row_bytes);
    }
  }
}

template <Cell cell> PreparedOp prepare_recurrent(OpContext& ctx) {
  const std::size_t max_inputs = cell == Cell::lstm ? 8 : 6;
  ctx.expect_inputs(3, max_inputs);
  RecurrentPlan p;
  p.cell = cell;
  for (std::size_t i = 0; i < max_inputs; ++i) {
    if (ctx.has_input(i)) {
      ctx.expect_dtype(i, {i == 4 ? DataType::int32 : DataType::float32});
    }
  }
  const std::string direction = ctx.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    ctx.fail("attribute 'direction' is '{}', expected forward, reverse or bidirectional", direction);
  }
  p.directions = direction == "bidirectional" ? 2 : 1;
  p.reverse_only = direction == "reverse";
  p.batch_major = ctx.attr_int("layout", 0) != 0;
  p.input_forget = ctx.attr_int("input_forget", 0) != 0;
  p.linear_before_reset = ctx.attr_int("linear_before_reset", 0) != 0;
  p.clip = ctx.attr_float("clip", 0.0f);
  if (p.clip < 0.0f) {
    ctx.fail("attribute 'clip' is {}, expected a positive bound", p.clip);
  }
  p.activations = activations_of(ctx, cell, p.directions);
  const auto& x = ctx.input(0).shape;
  if (x.size() != 3) {
    ctx.fail("input X has shape {}, expected rank 3", shape_string(x));
  }
  p.seq = p.batch_major ? x[1] : x[0];
  p.batch = p.batch_major ? x[0] : x[1];
  p.input = x[2];
  const int64_t G = gates_of(cell);
  const auto& w = ctx.input(1).shape;
  if (w.size() != 3 || w[0] != p.directions || w[1] % G != 0 || w[2] != p.input) {
    ctx.fail("input W has shape {}, expected [{}, {} * hidden_size, {}]", shape_string(w), p.directions, G, p.input);
  }
  p.hidden = ctx.attr_int("hidden_size", w[1] / G);
  const int64_t H = p.hidden;
  const auto expect_shape = [&](std::size_t i, const char* name, std::vector<int64_t> shape) {
    if (ctx.has_input(i) && ctx.input(i).shape != shape) {
      ctx.fail("input {} has shape {}, expected {}", name, shape_string(ctx.input(i).shape), shape_string(shape));
    }
  };
  expect_shape(1, "W", {p.directions, G * H, p.input});
  expect_shape(2, "R", {p.directions, G * H, H});
  expect_shape(3, "B", {p.directions, 2 * G * H});
  expect_shape(4, "sequence_lens", {p.batch});
  const std::vector<int64_t> state_shape =
      p.batch_major ? std::vector<int64_t>{p.batch, p.directions, H} : std::vector<int64_t>{p.directions, p.batch, H};
  expect_shape(5, "initial_h", state_shape);
  if (cell == Cell::lstm) {
    expect_shape(6, "initial_c", state_shape);
    expect_shape(7, "P", {p.directions, 3 * H});
  }
  PreparedOp op;
  const std::vector<int64_t> y = p.batch_major ? std::vector<int64_t>{p.batch, p.seq, p.directions, H}
                                               : std::vector<int64_t>{p.seq, p.directions, p.batch, H};
  op.outputs = {TensorInfo{DataType::float32, y}, TensorInfo{DataType::float32, state_shape}};
  if (cell == Cell::lstm) {
    op.outputs.push_back(TensorInfo{DataType::float32, state_shape});
  }
  op.outputs.resize(ctx.output_count());
  op.scratch_bytes =
      static_cast<std::size_t>(p.seq * p.batch * G * H + p.batch * G * H + 3 * p.batch * H) * sizeof(float);
  op.kernel = [p](KernelContext& k) {
    auto* scratch = reinterpret_cast<float*>(k.scratch);
    for (int64_t d = 0; d < p.directions; ++d) {
      run_direction(p, k, d, p.reverse_only || d == 1, scratch);
    }
  };
  return op;
}

const OpRegistrar rnn_op{"RNN", prepare_recurrent<Cell::rnn>};
const OpRegistrar gru_op{"GRU", prepare_recurrent<Cell::gru>};
const OpRegistrar lstm_op{"LSTM", prepare_recurrent<Cell::lstm>};

}  // namespace
}  // namespace rknnxx::host
