#pragma once
// The bodies of <rknnxx/runtime/outputs.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>
#include <rknnxx/runtime/outputs.hpp>

namespace rknnxx {

RKNNXX_DECL Outputs& Outputs::operator=(Outputs&& o) noexcept {
  if (this != &o) {
    reset();
    state_ = std::move(o.state_);
    outputs_ = std::move(o.outputs_);
    infos_ = std::move(o.infos_);
  }
  return *this;
}

RKNNXX_DECL OutputData Outputs::operator[](std::size_t i) const& {
  check("rknnxx::Outputs::operator[]");
  if (i >= outputs_.size())
    throw Error(Errc::param_invalid, "rknnxx::Outputs::operator[]",
                detail::message("output {} is out of range: the model has {} outputs", i, outputs_.size()));
  const auto& o = outputs_[i];
  return {infos_[i], {static_cast<const std::byte*>(o.buf), o.size}};
}

RKNNXX_DECL OutputData Outputs::operator[](std::string_view name) const& {
  for (std::size_t i = 0; i < infos_.size(); ++i)
    if (infos_[i].name() == name) return (*this)[i];
  std::string names;
  for (const auto& info : infos_) names += detail::message("{}\"{}\"", names.empty() ? "" : ", ", info.name());
  throw Error(Errc::param_invalid, "rknnxx::Outputs::operator[]",
              detail::message("no output is named \"{}\"; the outputs are {}", name, names));
}

RKNNXX_DECL void Outputs::reset() noexcept {
  if (!state_) return;
  if (state_->alive && !outputs_.empty() && state_->api().rknn_outputs_release != nullptr) {
    state_->forget_outputs(outputs_);
    (void)state_->api().rknn_outputs_release(state_->handle, static_cast<std::uint32_t>(outputs_.size()),
                                             outputs_.data());
  }
  outputs_.clear();
  state_.reset();
}

RKNNXX_DECL Outputs::Outputs(std::shared_ptr<detail::ContextState> state, std::vector<rknn_output> outputs,
                             std::vector<TensorInfo> infos)
    : state_(std::move(state)), outputs_(std::move(outputs)), infos_(std::move(infos)) {
  for (const rknn_output& o : outputs_) state_->outputs.push_back(o);
}

RKNNXX_DECL void Outputs::check(std::string_view call) const {
  if (!state_) throw Error(Errc::output_invalid, std::string(call), "the outputs were reset or moved from");
  state_->check_alive(call, "the outputs");
}

}  // namespace rknnxx
