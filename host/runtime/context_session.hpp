#pragma once
// The engine a context runs: the float session, or for a quantized model the w8a8 one
// (quantize::QuantizedSession, which owns its session). `->` reaches the session either way; run()
// goes through the quantized session's rounding of inputs, run_views() takes them on their grids.

#include "loaded_model.hpp"
#include "../engine/session.hpp"
#include "../quantize/calibrate.hpp"

#include <memory>
#include <span>
#include <vector>

namespace rknnxx::host {

class ContextSession {
public:
  ContextSession() = default;
  explicit ContextSession(std::unique_ptr<Session> plain);
  explicit ContextSession(std::unique_ptr<quantize::QuantizedSession> quantized);

  Session* operator->() const noexcept { return session_; }
  Session& operator*() const noexcept { return *session_; }
  [[nodiscard]] std::vector<Tensor> run(std::span<const Tensor> inputs);
  // Session::run_views: the outputs where the engine wrote them, until the next run. The inputs of a quantized
  // model hold values of their grids already, as the input conversion (decode_input) leaves them.
  [[nodiscard]] std::span<const Tensor> run_views(std::span<const Tensor> inputs);
  // The weights as the board holds them: int8 (1 byte an element) or int4 (half a byte) where
  // quantized, as the engine keeps them elsewhere.
  [[nodiscard]] size_t board_weight_bytes() const;

private:
  std::unique_ptr<Session> plain_;
  std::unique_ptr<quantize::QuantizedSession> quantized_;
  Session* session_ = nullptr;
};

// The engine's view of one choice of a model's input shapes.
[[nodiscard]] std::vector<TensorInfo> input_infos(const LoadedModel& model, const ShapeChoice& shapes);

}  // namespace rknnxx::host
