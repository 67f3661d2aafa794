#pragma once
// Every live context and memory descriptor of the process, so that the C interface can
// tell a live handle from a destroyed or made-up one instead of dereferencing it.
// Context handles are never reused: a stale handle stays invalid for the process's life.
// Every entry is shared (shared_ptr): a lookup hands out ownership taken under the lock, so an
// entry removed by another thread meanwhile lives until the last caller is done with it.

#include <rknnxx/abi/c_api.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "host_mem.hpp"

namespace rknnxx::host {

class HostContext;
class MatmulContext;

class Registry {
public:
  rknn_context add_context(std::shared_ptr<HostContext> context);
  // The live context behind `handle`, or RKNN_ERR_CTX_INVALID.
  [[nodiscard]] std::shared_ptr<HostContext> context(rknn_context handle) const;
  void remove_context(rknn_context handle);

  // Matmul contexts (matmul.hpp) share the handle space: memory made with rknn_create_mem on a
  // matmul context belongs to it as it would to a model's context.
  rknn_context add_matmul(std::shared_ptr<MatmulContext> context);
  // The live matmul context behind `handle`, or RKNN_ERR_CTX_INVALID.
  [[nodiscard]] std::shared_ptr<MatmulContext> matmul(rknn_context handle) const;
  void remove_matmul(rknn_context handle);
  // RKNN_ERR_CTX_INVALID unless `handle` is a live context of either kind (may own memory).
  void require_owner(rknn_context handle) const;

  rknn_tensor_mem* add_mem(std::shared_ptr<HostMem> mem);
  // The live memory behind `mem`, which must belong to `context` (or to no context). Shared: it
  // stays valid for the caller even if another thread destroys it meanwhile.
  [[nodiscard]] std::shared_ptr<HostMem> mem(rknn_context context, rknn_tensor_mem* mem) const;
  void remove_mem(rknn_context context, rknn_tensor_mem* mem);

private:
  mutable std::mutex mutex_;
  rknn_context next_handle_ = 0x1000;
  std::unordered_map<rknn_context, std::shared_ptr<HostContext>> contexts_;
  std::unordered_map<rknn_context, std::shared_ptr<MatmulContext>> matmuls_;
  std::unordered_map<rknn_tensor_mem*, std::shared_ptr<HostMem>> mems_;
};

Registry& registry();

}  // namespace rknnxx::host
