#include "registry.hpp"

#include "api_error.hpp"
#include "host_context.hpp"
#include "matmul.hpp"

namespace rknnxx::host {

Registry& registry() {
  static Registry instance;
  return instance;
}

rknn_context Registry::add_context(std::shared_ptr<HostContext> context) {
  std::lock_guard lock(mutex_);
  const rknn_context handle = next_handle_++;
  context->set_handle(handle);
  contexts_.emplace(handle, std::move(context));
  return handle;
}

std::shared_ptr<HostContext> Registry::context(rknn_context handle) const {
  std::lock_guard lock(mutex_);
  auto found = contexts_.find(handle);
  if (found == contexts_.end())
    fail(RKNN_ERR_CTX_INVALID, "context {:#x} is not a live context (never created, or destroyed)",
         static_cast<uint64_t>(handle));
  return found->second;
}

void Registry::remove_context(rknn_context handle) {
  std::shared_ptr<HostContext> doomed;
  {
    std::lock_guard lock(mutex_);
    auto found = contexts_.find(handle);
    if (found == contexts_.end())
      fail(RKNN_ERR_CTX_INVALID, "context {:#x} is not a live context (never created, or destroyed)",
           static_cast<uint64_t>(handle));
    doomed = std::move(found->second);
    contexts_.erase(found);
  }
  // Memory still bound to the dying context would dangle: warn, as a leak detector would.
  std::lock_guard lock(mutex_);
  for (auto& [descriptor, mem] : mems_)
    if (mem->owner() == handle)
      log_warning("rknn_destroy: memory {} of {} bytes still belongs to context {:#x}; call rknn_destroy_mem first",
                  static_cast<const void*>(descriptor), descriptor->size, static_cast<uint64_t>(handle));
}

rknn_context Registry::add_matmul(std::shared_ptr<MatmulContext> context) {
  std::lock_guard lock(mutex_);
  const rknn_context handle = next_handle_++;
  matmuls_.emplace(handle, std::move(context));
  return handle;
}

std::shared_ptr<MatmulContext> Registry::matmul(rknn_context handle) const {
  std::lock_guard lock(mutex_);
  auto found = matmuls_.find(handle);
  if (found == matmuls_.end())
    fail(RKNN_ERR_CTX_INVALID, "context {:#x} is not a live matmul context (never created, or destroyed)",
         static_cast<uint64_t>(handle));
  return found->second;
}

void Registry::remove_matmul(rknn_context handle) {
  std::shared_ptr<MatmulContext> doomed;  // released after the lock
  std::lock_guard lock(mutex_);
  auto found = matmuls_.find(handle);
  if (found == matmuls_.end())
    fail(RKNN_ERR_CTX_INVALID, "context {:#x} is not a live matmul context (never created, or destroyed)",
         static_cast<uint64_t>(handle));
  doomed = std::move(found->second);
  matmuls_.erase(found);
  for (auto& [descriptor, mem] : mems_)
    if (mem->owner() == handle)
      log_warning(
          "rknn_matmul_destroy: memory {} of {} bytes still belongs to context {:#x}; call rknn_destroy_mem first",
          static_cast<const void*>(descriptor), descriptor->size, static_cast<uint64_t>(handle));
}

void Registry::require_owner(rknn_context handle) const {
  std::lock_guard lock(mutex_);
  if (!contexts_.contains(handle) && !matmuls_.contains(handle))
    fail(RKNN_ERR_CTX_INVALID, "context {:#x} is not a live context (never created, or destroyed)",
         static_cast<uint64_t>(handle));
}

rknn_tensor_mem* Registry::add_mem(std::shared_ptr<HostMem> mem) {
  std::lock_guard lock(mutex_);
  rknn_tensor_mem* descriptor = mem->descriptor();
  mems_.emplace(descriptor, std::move(mem));
  return descriptor;
}

namespace {
// The live entry for `mem` that `context` may use; called with the registry's lock held.
template <class Map> auto find_mem(Map& mems, rknn_context context, rknn_tensor_mem* mem) {
  auto found = mems.find(mem);
  if (found == mems.end())
    fail(RKNN_ERR_PARAM_INVALID, "mem {} is not live memory of this runtime (never created, or destroyed)",
         static_cast<const void*>(mem));
  const rknn_context owner = found->second->owner();
  if (owner != 0 && owner != context)
    fail(RKNN_ERR_PARAM_INVALID, "mem {} belongs to context {:#x}, not to context {:#x}", static_cast<const void*>(mem),
         static_cast<uint64_t>(owner), static_cast<uint64_t>(context));
  return found;
}
}  // namespace

std::shared_ptr<HostMem> Registry::mem(rknn_context context, rknn_tensor_mem* mem) const {
  std::lock_guard lock(mutex_);
  return find_mem(mems_, context, mem)->second;
}

void Registry::remove_mem(rknn_context context, rknn_tensor_mem* mem) {
  std::shared_ptr<HostMem> doomed;  // released after the lock: the last owner unmaps
  std::lock_guard lock(mutex_);
  auto found = find_mem(mems_, context, mem);
  doomed = std::move(found->second);
  mems_.erase(found);
}

}  // namespace rknnxx::host
