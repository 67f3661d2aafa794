#pragma once
// Outputs: the results of rknn_outputs_get as an RAII object, given back (rknn_outputs_release)
// when it goes out of scope or by reset(). Made by Context::outputs().
//
//   auto out = ctx.outputs();                  // float32 (want_float), or OutputType::native
//   std::span<const float> logits = out[0].as<float>();
//   out["features"].info().dims();

#include <rknnxx/core/error.hpp>
#include <rknnxx/core/std_light.hpp>  // std::shared_ptr
#include <rknnxx/runtime/context_state.hpp>
#include <rknnxx/tensor/attr.hpp>
#include <rknnxx/tensor/view.hpp>

#include <cstddef>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace rknnxx {

namespace detail {
class ContextOps;  // context.hpp
}  // namespace detail

// What rknn_outputs_get returns: float32 (want_float = 1: dequantized, NCHW) or the model's type.
enum class OutputType : std::uint8_t { float32, native };

// One output: its attribute (type and dims as delivered) and its bytes.
class OutputData {
public:
  OutputData(const TensorInfo& info, std::span<const std::byte> bytes) : info_(info), bytes_(bytes) {}

  [[nodiscard]] const TensorInfo& info() const noexcept { return info_; }
  [[nodiscard]] TensorType type() const noexcept { return info_.type(); }
  [[nodiscard]] Dims dims() const { return info_.dims(); }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  // The values as T, which must be the delivered type.
  template <TensorElement T> [[nodiscard]] std::span<const T> as() const {
    if (tensor_type_of<T> != info_.type())
      throw Error(
          Errc::output_invalid, "rknnxx::OutputData::as",
          detail::message("asked for {}, the output holds {}", name_of(tensor_type_of<T>), name_of(info_.type())),
          info_.id());
    return {reinterpret_cast<const T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }
  // The values as a typed view in layout L (an Error if the output has another layout).
  template <TensorElement T, Layout L> [[nodiscard]] TensorView<const T, L> view() const {
    const auto s = as<T>();
    return TensorView<const T, L>(s, info_.layout().template mapping<L>(), info_.quantization());
  }

private:
  TensorInfo info_;
  std::span<const std::byte> bytes_;
};

class Outputs {
public:
  Outputs(Outputs&& o) noexcept
      : state_(std::move(o.state_)), outputs_(std::move(o.outputs_)), infos_(std::move(o.infos_)) {}
  Outputs& operator=(Outputs&& o) noexcept;
  Outputs(const Outputs&) = delete;
  Outputs& operator=(const Outputs&) = delete;
  ~Outputs() { reset(); }

  [[nodiscard]] std::size_t size() const noexcept { return outputs_.size(); }
  // An OutputData points into the buffers this object owns, so it is taken only from an Outputs
  // that outlives it: `ctx.outputs()[0].as<float>()` would release the buffers at the end of the
  // statement and leave the span dangling, and does not compile (keep the Outputs in a variable).
  [[nodiscard]] OutputData operator[](std::size_t i) const&;
  [[nodiscard]] OutputData operator[](std::string_view name) const&;
  OutputData operator[](std::size_t) const&& = delete;
  OutputData operator[](std::string_view) const&& = delete;

  // Gives the buffers back to the runtime now (rknn_outputs_release); idempotent.
  void reset() noexcept;

private:
  friend class detail::ContextOps;
  Outputs(std::shared_ptr<detail::ContextState> state, std::vector<rknn_output> outputs, std::vector<TensorInfo> infos);
  void check(std::string_view call) const;

  std::shared_ptr<detail::ContextState> state_;
  std::vector<rknn_output> outputs_;
  std::vector<TensorInfo> infos_;
};

}  // namespace rknnxx

#ifndef RKNNXX_SEPARATE_COMPILATION
#include <rknnxx/runtime/impl/outputs.hpp>
#endif
