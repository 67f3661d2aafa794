#pragma once
// Calibration and quantized execution on the host engine (docs/quantization.md).
//
//   Graph graph = quantize::inference_graph(model);          // BatchNormalization folded, Relu fused
//   auto inputs = quantize::calibration_inputs(model_inputs, config);
//   auto samples = quantize::read_dataset("dataset.txt", inputs.size());
//   auto table = quantize::calibrate(graph, inputs, samples, {.algorithm = config.effective_quantized_algorithm()});
//   quantize::QuantizedSession q(graph, table, config.effective_quantized_method());
//   auto outputs = q.run(sample_tensors);                     // w8a8 semantics
//
// Calibration runs the float graph over the samples and gathers the statistics of the graph's
// float inputs and of every float tensor a step produces. Tensors that only move or select values
// of another (Reshape, Transpose, MaxPool, ...) share that tensor's parameters, as on the NPU.

#include "dataset.hpp"
#include "statistics.hpp"
#include "weights.hpp"

#include "engine.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rknnxx::host::quantize {

// The graph as it is quantized and run: BatchNormalization folded into Conv, Relu and Clip fused,
// so that statistics and weights are those of the fused operators, as the NPU executes them.
Graph inference_graph(const onnx::ModelProto& model);

// The graph's inputs as the config's rules and calibration_inputs() take them: names and declared
// shapes, a dimension without a fixed value being dynamic (-1).
std::vector<rknnxx::toolkit::ModelInput> model_inputs(const Graph& graph);

// For every value of a prepared session's graph (by ValueId): the value whose parameters it takes
// under w8a8 (itself, or the first input of a chain of grid-keeping operators such as Reshape or
// MaxPool), or no_value when it is not a float activation. Calibration and the conversion of QDQ
// models (host/convert/qdq.hpp) both quantize exactly these values.
std::vector<ValueId> parameter_sources(const Session& session);

// The activation parameters of a calibrated graph, by value name (graph inputs, and every float
// tensor a node produces).
struct ActivationTable {
  Algorithm algorithm = Algorithm::normal;
  std::map<std::string, AffineParams> params;
  std::size_t samples = 0;
  // Hybrid quantization (w8a8 only; docs/quantization.md): the values whose producing layers run in
  // float16, each a value of `params` (whose parameters an int8 layer reading it still needs).
  std::set<std::string> float16;
};

// Gathers statistics sample by sample.
class Calibrator {
public:
  // `algorithm` decides whether histograms are kept (kl_divergence, mmse) or only ranges (normal);
  // `ints` are the activations' integers (activation_range: int8, or int16 dynamic fixed point).
  explicit Calibrator(const Graph& graph, Algorithm algorithm, std::size_t threads = 0, IntRange ints = int8_range);
  ~Calibrator();
  Calibrator(Calibrator&&) noexcept;
  Calibrator& operator=(Calibrator&&) noexcept;

  // Runs the float graph on one sample (float32 tensors in input order).
  void add(std::span<const Tensor> inputs);
  // Chooses every tensor's range with the constructor's algorithm, or another one (kl_divergence
  // and mmse need the histograms, which a calibrator made for normal does not keep). Throws
  // std::invalid_argument when no sample was added or the histograms are missing.
  [[nodiscard]] ActivationTable finish() const;
  [[nodiscard]] ActivationTable finish(Algorithm algorithm) const;

private:
  struct State;
  std::unique_ptr<State> state_;
};

struct CalibrationOptions {
  Algorithm algorithm = Algorithm::normal;
  std::size_t threads = 0;     // the engine's threads; 0: its default
  IntRange ints = int8_range;  // the activations' integers (activation_range, settings.hpp)
  bool progress = true;        // a progress bar on stderr, when stderr is a terminal
  // Called after each sample instead of drawing the bar (a caller with its own progress display).
  std::function<void(std::size_t done, std::size_t total)> on_sample;
};

// Loads every sample (load_sample) and calibrates on it. Throws DatasetError for a bad sample.
ActivationTable calibrate(const Graph& graph, std::span<const CalibrationInput> inputs,
                          std::span<const DatasetSample> samples, const CalibrationOptions& options = {},
                          std::string_view source = "dataset");

// The weights of Conv, ConvTranspose, Gemm and MatMul (float constants) quantized in place in
// `graph` with `method` to the integers `ints` (int8, or int4 for w4a16); returns their parameters
// by constant name. Biases stay float: on the NPU they are int32 with scale input_scale *
// weight_scale, finer than any activation step.
// `clips` gives gdq's clip ratios by constant name (choose_gdq_clips); a weight without them gets
// its exact minimum and maximum. Throws std::invalid_argument for ratios of a name that is not such a
// weight, or of another count than the weight's sets of parameters.
// The weights named in `float16` (those of hybrid quantization's float16 layers, float16_weights())
// are not quantized: they are rounded to float16 in place and not returned.
using ClipRatios = std::map<std::string, std::vector<float>>;
std::map<std::string, WeightQuantization> quantize_graph_weights(Graph& graph, Method method,
                                                                 IntRange ints = int8_range,
                                                                 const ClipRatios& clips = {},
                                                                 const std::set<std::string>& float16 = {});

// Hybrid quantization: the weights (of the kinds quantize_graph_weights quantizes) that a node
// producing one of the `float16_values` reads; they stay float16.
std::set<std::string> float16_weights(const Graph& graph, const std::set<std::string>& float16_values);

// gdq (quantized_algorithm 'gdq', w8a16 and w4a16; docs/quantization.md): runs the float graph over
// the samples, gathers the mean and variance of every input feature each weight multiplies, and
// chooses each weight's clip ratios (gdq_clip_ratios, weights.hpp). Throws DatasetError for a bad sample.
ClipRatios choose_gdq_clips(const Graph& graph, std::span<const CalibrationInput> inputs,
                            std::span<const DatasetSample> samples, Method method, IntRange ints,
                            const CalibrationOptions& options = {}, std::string_view source = "dataset");

// The graph run with quantized semantics: weights quantized with `method` to `weight_ints`; the
// graph inputs and every calibrated tensor replaced by scale * (q - zero_point) right after the
// step producing it. With w8a8 or w16a16i_dfp (a table with parameters) the activations are int8
// values, or int16 ones times 2^-fl, exact in float32, whatever `options` says; a table without parameters is a weight-only type (w8a16,
// w4a16): the activations stay as `options` has them (float16 for those types).
// Hybrid quantization (the table's float16 values): the layers producing them keep float16 weights
// and round those outputs to float16; an output that another layer (one not float16) reads is then
// also rounded to its int8 parameters, the conversion the NPU makes before an int8 layer reads it.
// Throws std::invalid_argument for a float16 value that is not one of the table's parameters.
class QuantizedSession {
public:
  QuantizedSession(Graph graph, ActivationTable table, Method method = Method::channel(), SessionOptions options = {},
                   IntRange weight_ints = int8_range, const ClipRatios& clips = {});
  ~QuantizedSession();
  QuantizedSession(QuantizedSession&&) noexcept;
  QuantizedSession& operator=(QuantizedSession&&) noexcept;

  std::vector<Tensor> run(std::span<const Tensor> inputs);
  // Session::run_views through the rounding of inputs.
  std::span<const Tensor> run_views(std::span<const Tensor> inputs);
  // Session::run_views of inputs that already hold values of their parameters' grids, as the rounding of run_views
  // leaves them (the host runtime's input conversion quantizes them so): without its copy and rounding, a twentieth
  // of a small model's run. Builds with assertions check that they do, and throw EngineError naming the input.
  std::span<const Tensor> run_views_on_grids(std::span<const Tensor> inputs);
  // Called after every step once its outputs are rounded to their parameters (the session's output
  // rounding does that): it sees what the int8 tensors hold and may rewrite them, as the accuracy
  // analysis does. Set, it keeps every value NCHW (Session::set_step_observer). An empty function
  // removes it.
  void set_step_observer(Session::StepObserver after_rounding);
  [[nodiscard]] const ActivationTable& activations() const noexcept;
  [[nodiscard]] const std::map<std::string, WeightQuantization>& weights() const noexcept;
  // The weights kept float16 (hybrid quantization): two bytes an element on the board.
  [[nodiscard]] const std::set<std::string>& float16_weights() const noexcept;
  // Rounds the values of `id` as the session rounds that step output: to float16 and/or its int8
  // parameters; unchanged for a value the session does not round. The accuracy analysis's single
  // run rounds the float values with it.
  void round_output(ValueId id, std::span<float> values) const;
  [[nodiscard]] Session& session() noexcept;

private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rknnxx::host::quantize
