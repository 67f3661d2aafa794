#include "context_session.hpp"

namespace rknnxx::host {

ContextSession::ContextSession(std::unique_ptr<Session> plain) : plain_(std::move(plain)), session_(plain_.get()) {}

ContextSession::ContextSession(std::unique_ptr<quantize::QuantizedSession> quantized)
    : quantized_(std::move(quantized)), session_(&quantized_->session()) {}

std::vector<Tensor> ContextSession::run(std::span<const Tensor> inputs) {
  return quantized_ ? quantized_->run(inputs) : plain_->run(inputs);
}

std::span<const Tensor> ContextSession::run_views(std::span<const Tensor> inputs) {
  // The input conversion (decode_input) quantized them to their parameters, or rounded them to float16, already.
  return quantized_ ? quantized_->run_views_on_grids(inputs)
                    : plain_->run_views(inputs, Session::Inputs::already_rounded);
}

size_t ContextSession::board_weight_bytes() const {
  size_t bytes = session_->weight_bytes();
  if (!quantized_) return bytes;
  // The engine keeps the quantized weights as float32 grid values; the board keeps one byte each
  // (int8), half a byte (int4, w4a16; two to a byte, a tensor of odd size rounded up) or two bytes
  // (int16, w16a16i_dfp); the weights of a hybrid model's float16 layers two bytes each.
  const Graph& graph = session_->graph();
  for (const std::string& name : quantized_->float16_weights())
    if (const auto id = graph.find(name))
      if (const Tensor* constant = graph.constant(*id))
        bytes -= constant->bytes() - 2 * static_cast<size_t>(constant->elements());
  for (const auto& [name, weights] : quantized_->weights())
    if (const auto id = graph.find(name))
      if (const Tensor* constant = graph.constant(*id)) {
        const auto elements = static_cast<size_t>(constant->elements());
        const auto range = weights.params.empty() ? quantize::int8_range : weights.params.front().range;
        size_t board = elements;                                            // int8
        if (range == quantize::int4_range) board = (elements + 1) / 2;      // int4
        else if (range == quantize::int16_dfp_range) board = elements * 2;  // int16
        bytes -= constant->bytes() - board;
      }
  return bytes;
}

std::vector<TensorInfo> input_infos(const LoadedModel& model, const ShapeChoice& shapes) {
  std::vector<TensorInfo> infos;
  for (size_t i = 0; i < shapes.size(); ++i) infos.push_back({model.inputs()[i].dtype, shapes[i]});
  return infos;
}

}  // namespace rknnxx::host
