#pragma once
// The bodies of <rknnxx/runtime/io_binding.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>
#include <rknnxx/runtime/io_binding.hpp>

namespace rknnxx {

RKNNXX_DECL IoBinding::IoBinding(ContextRef ctx, BindAs inputs, BindAs outputs) : IoBinding(std::move(ctx)) {
  for (std::uint32_t i = 0; i < ctx_.num_inputs(); ++i) bind_input(i, inputs);
  for (std::uint32_t o = 0; o < ctx_.num_outputs(); ++o) bind_output(o, outputs);
}

RKNNXX_DECL IoBinding& IoBinding::operator=(IoBinding&& o) noexcept {
  if (this != &o) {
    slots_.clear();
    ctx_ = std::move(o.ctx_);
    slots_ = std::move(o.slots_);
    generation_ = std::exchange(o.generation_, 0);
  }
  return *this;
}

RKNNXX_DECL ShapeChange IoBinding::set_input_shapes(std::size_t group) {
  ShapeChange change = ctx_.set_input_shapes(group);
  rebind();
  return change;
}

RKNNXX_DECL ShapeChange IoBinding::set_input_shapes(std::span<const Dims> dims, DimsOrder order) {
  ShapeChange change = ctx_.set_input_shapes(dims, order);
  rebind();
  return change;
}

RKNNXX_DECL void IoBinding::rebind() {
  for (Slot& slot : slots_) attach(slot);
}

RKNNXX_DECL void IoBinding::run() {
  for (const Slot& slot : slots_) (void)fresh_slot(slot, "rknn_run");
  ctx_.run();
}

RKNNXX_DECL const TensorInfo& IoBinding::bound_input(TensorRef t) const {
  return find(true, ctx_.input_index(t), "rknnxx::IoBinding::bound_input").info;
}

RKNNXX_DECL const TensorInfo& IoBinding::bound_output(TensorRef t) const {
  return find(false, ctx_.output_index(t), "rknnxx::IoBinding::bound_output").info;
}

RKNNXX_DECL Mem& IoBinding::input_memory(TensorRef t) {
  return find(true, ctx_.input_index(t), "rknnxx::IoBinding::input_memory").mem;
}

RKNNXX_DECL Mem& IoBinding::output_memory(TensorRef t) {
  return find(false, ctx_.output_index(t), "rknnxx::IoBinding::output_memory").mem;
}

RKNNXX_DECL TensorInfo IoBinding::attr_for(const Slot& slot, bool current) const {
  const AttrQuery q = slot.as.native ? (current ? AttrQuery::current_native : AttrQuery::native)
                                     : (current ? AttrQuery::current : AttrQuery::normal);
  TensorInfo info = slot.input ? ctx_.input_info(slot.index, q) : ctx_.output_info(slot.index, q);
  if (slot.as.element_type || slot.as.format)
    info = info.with(slot.as.element_type.value_or(info.type()), slot.as.format.value_or(info.format()));
  return info;
}

RKNNXX_DECL void IoBinding::bind(bool input, std::uint32_t index, BindAs as, Mem* app_mem) {
  auto& s = ctx_.use("rknn_set_io_mem");
  const TensorInfo& named = (input ? s.current_inputs : s.current_outputs).at(index);
  Slot slot{input, index, as, {}, {}, detail::message("{} {} \"{}\"", input ? "input" : "output", index, named.name()),
            false};
  if (app_mem != nullptr) {
    (void)ctx_.own(*app_mem, input ? "rknnxx::IoBinding::bind_input" : "rknnxx::IoBinding::bind_output");
    slot.mem = app_mem->view();
    slot.app_owned = true;
    // The largest shape of the set first, so that every later shape switch rebinds it.
    slot.info = attr_for(slot, false);
    require_fits(slot, slot.info.alloc_size(), " (the largest shape of the model's shape set)");
  }
  attach(slot);
  for (Slot& old : slots_)
    if (old.input == input && old.index == index) {
      old = std::move(slot);
      return;
    }
  slots_.push_back(std::move(slot));
}

RKNNXX_DECL void IoBinding::require_fits(const Slot& slot, std::uint64_t need, std::string_view which) const {
  const std::uint32_t given = slot.mem.size();
  if (given < need)
    throw Error(Errc::param_invalid, "rknn_set_io_mem",
                detail::message("the application's memory bound to {} holds {} bytes; the tensor needs {} bytes{}",
                                slot.label, given, need, which),
                slot.info.id());
}

RKNNXX_DECL void IoBinding::attach(Slot& slot) {
  auto& s = ctx_.use("rknn_set_io_mem");
  const bool shapes_chosen = s.group.has_value();
  if (slot.app_owned) require_alive(slot, "rknn_set_io_mem");
  slot.info = attr_for(slot, shapes_chosen);
  std::uint64_t need = slot.info.alloc_size();
  if (slot.app_owned) {
    require_fits(slot, need, shapes_chosen ? detail::message(" (shape group {})", *s.group) : std::string());
  } else if (!slot.mem) {
    if (shapes_chosen) need = std::max<std::uint64_t>(need, attr_for(slot, false).alloc_size());
    slot.mem = ctx_.create_mem(need);
  } else if (slot.mem.size() < need) {
    slot.mem = ctx_.create_mem(need);
  }
  ctx_.set_io_mem(slot.mem, slot.info);
  detail::ContextState::BoundMem* entry = nullptr;
  for (auto& b : s.bound)
    if (b.label == slot.label) {
      entry = &b;
      break;
    }
  if (entry == nullptr) entry = &s.bound.emplace_back();
  entry->label = slot.label;
  entry->life = slot.mem.life();
  entry->app_owned = slot.app_owned;
  s.has_bindings = true;
  s.bound_generation = s.generation;
  generation_ = s.generation;
}

RKNNXX_DECL void IoBinding::require_alive(const Slot& slot, std::string_view call) const {
  if (slot.mem.destroyed())
    throw Error(
        Errc::param_invalid, std::string(call),
        detail::message("the application's memory bound to {} was destroyed (or released to C code) by its Mem; "
                        "bind new memory to it",
                        slot.label),
        slot.info.id());
}

RKNNXX_DECL IoBinding::Slot& IoBinding::find(bool input, std::uint32_t index, std::string_view call) {
  for (Slot& slot : slots_)
    if (slot.input == input && slot.index == index) return slot;
  throw Error(Errc::param_invalid, std::string(call),
              detail::message("{} {} is not bound: bind it with bind_{} first", input ? "input" : "output", index,
                              input ? "input" : "output"));
}

RKNNXX_DECL const IoBinding::Slot& IoBinding::find(bool input, std::uint32_t index, std::string_view call) const {
  return const_cast<IoBinding*>(this)->find(input, index, call);
}

RKNNXX_DECL const IoBinding::Slot& IoBinding::fresh_slot(const Slot& slot, std::string_view call) const {
  if (slot.app_owned) require_alive(slot, call);
  if (generation_ != ctx_.shape_generation())
    throw Error(Errc::param_invalid, std::string(call),
                detail::message("stale binding of {}: the input shapes changed after it was bound (bound for shape "
                                "generation {}, the context is at {}); switch shapes with IoBinding::set_input_shapes "
                                "or call rebind()",
                                slot.label, generation_, ctx_.shape_generation()));
  return slot;
}

RKNNXX_DECL IoBinding::Slot& IoBinding::fresh(bool input, std::uint32_t index, std::string_view call) {
  Slot& slot = find(input, index, call);
  (void)fresh_slot(slot, call);
  return slot;
}

}  // namespace rknnxx
