#include "context_session.hpp"

namespace rknnxx::host {

ContextSession::ContextSession(std::unique_ptr<Session> plain) : plain_(std::move(plain)), session_(plain_.get()) {}

ContextSession::ContextSession(std::unique_ptr<quantize::QuantizedSession> quantized)
    : quantized_(std::move(quantized)), session_(&quantized_->session()) {}

std::vector<Tensor> ContextSession::run(std::span<const Tensor> inputs) {
  return quantized_ ? quantized_->run(inputs) : plain_->run(inputs);
}

size_t ContextSession::board_weight_bytes() const {
  size_t bytes = session_->weight_bytes();
  if (!quantized_) return bytes;
  // The engine keeps the quantized weights as float32 grid values; the board keeps one byte each
  // (int8), or half a byte (int4, w4a16; two to a byte, a tensor of odd size rounded up); the
  // weights of a hybrid model's float16 layers two bytes each.
  const Graph& graph = session_->graph();
  for (const std::string& name : quantized_->float16_weights())
    if (const auto id = graph.find(name))
      if (const Tensor* constant = graph.constant(*id))
        bytes -= constant->bytes() - 2 * static_cast<size_t>(constant->elements());
  for (const auto& [name, weights] : quantized_->weights())
    if (const auto id = graph.find(name))
      if (const Tensor* constant = graph.constant(*id)) {
        const auto elements = static_cast<size_t>(constant->elements());
        const bool int4 = !weights.params.empty() && weights.params.front().range == quantize::int4_range;
        bytes -= constant->bytes() - (int4 ? (elements + 1) / 2 : elements);
      }
  return bytes;
}

std::vector<TensorInfo> input_infos(const LoadedModel& model, const ShapeChoice& shapes) {
  std::vector<TensorInfo> infos;
  for (size_t i = 0; i < shapes.size(); ++i) infos.push_back({model.inputs()[i].dtype, shapes[i]});
  return infos;
}

}  // namespace rknnxx::host
