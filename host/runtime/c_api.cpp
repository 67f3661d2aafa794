// The vendor runtime's C interface, exported with C linkage by librknnxx_host.so.
// Every function validates its arguments, finds the context or memory it names in the
// registries (so a destroyed or made-up handle is an error, not a crash), and turns
// failures into the vendor's return codes plus one log line (api_error.hpp).

#include <rknnxx/abi/c_api.h>
#include <rknnxx/abi/c_custom_op.h>
#include <rknnxx/runtime/fd_range.hpp>

#include "api_error.hpp"
#include "host_context.hpp"
#include "registry.hpp"

#include <string>

using namespace rknnxx::host;

namespace {

// For the create_mem family, which reports failure as NULL.
template <class Body> rknn_tensor_mem* guarded_mem(const char* call, Body&& body) noexcept {
  rknn_tensor_mem* result = nullptr;
  guarded(call, [&] { result = body(); });
  return result;
}

}  // namespace

extern "C" {

int rknn_init(rknn_context* context, void* model, uint32_t size, uint32_t flag, rknn_init_extend* extend) {
  return guarded("rknn_init", [&] {
    require(context, "context");
    require(model, "model");
    *context = 0;
    *context = registry().add_context(HostContext::create(model, size, flag, extend));
  });
}

int rknn_dup_context(rknn_context* context_in, rknn_context* context_out) {
  return guarded("rknn_dup_context", [&] {
    require(context_in, "context_in");
    require(context_out, "context_out");
    auto source = registry().context(*context_in);
    *context_out = registry().add_context(source->dup());
  });
}

int rknn_destroy(rknn_context context) {
  return guarded("rknn_destroy", [&] { registry().remove_context(context); });
}

int rknn_query(rknn_context context, rknn_query_cmd cmd, void* info, uint32_t size) {
  return guarded("rknn_query", [&] {
    auto ctx = registry().context(context);
    require(info, "info");
    ctx->query(cmd, info, size);
  });
}

int rknn_inputs_set(rknn_context context, uint32_t n_inputs, rknn_input inputs[]) {
  return guarded("rknn_inputs_set", [&] {
    auto ctx = registry().context(context);
    require(inputs, "inputs");
    ctx->inputs_set({inputs, n_inputs});
  });
}

int rknn_set_batch_core_num(rknn_context context, int core_num) {
  return guarded("rknn_set_batch_core_num", [&] { registry().context(context)->set_batch_core_num(core_num); });
}

int rknn_set_core_mask(rknn_context context, rknn_core_mask core_mask) {
  return guarded("rknn_set_core_mask", [&] { registry().context(context)->set_core_mask(core_mask); });
}

int rknn_run(rknn_context context, rknn_run_extend* extend) {
  return guarded("rknn_run", [&] { registry().context(context)->run(extend); });
}

int rknn_wait(rknn_context context, rknn_run_extend* extend) {
  return guarded("rknn_wait", [&] {
    (void)registry().context(context);
    (void)extend;
    // The vendor's platform table marks rknn_wait unsupported on every platform.
    fail(RKNN_ERR_FAIL, "not supported on any platform (as on the board)");
  });
}

int rknn_outputs_get(rknn_context context, uint32_t n_outputs, rknn_output outputs[], rknn_output_extend* extend) {
  return guarded("rknn_outputs_get", [&] {
    auto ctx = registry().context(context);
    require(outputs, "outputs");
    ctx->outputs_get({outputs, n_outputs}, extend);
  });
}

int rknn_outputs_release(rknn_context context, uint32_t n_ouputs, rknn_output outputs[]) {
  return guarded("rknn_outputs_release", [&] {
    auto ctx = registry().context(context);
    require(outputs, "outputs");
    ctx->outputs_release({outputs, n_ouputs});
  });
}

rknn_tensor_mem* rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr, void* virt_addr, uint32_t size) {
  return guarded_mem("rknn_create_mem_from_phys", [&] {
    auto owner = registry().context(ctx);
    return registry().add_mem(owner->wrap_mem(virt_addr, size, -1, 0, phys_addr, RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS));
  });
}

rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void* virt_addr, uint32_t size, int32_t offset) {
  return guarded_mem("rknn_create_mem_from_fd", [&] {
    auto owner = registry().context(ctx);
    // As a board's driver imports the dma-buf: an fd that is not open (closed, or never opened,
    // which would name whatever the process opens next), one that cannot be mapped, or a range
    // past its end is refused.
    if (const std::string problem = rknnxx::detail::fd_range_problem(fd, offset, size); !problem.empty())
      fail(RKNN_ERR_PARAM_INVALID, "{}", problem);
    return registry().add_mem(owner->wrap_mem(virt_addr, size, fd, offset, 0, RKNN_TENSOR_MEMORY_FLAGS_FROM_FD));
  });
}

rknn_tensor_mem* rknn_create_mem_from_mb_blk(rknn_context ctx, void* mb_blk, int32_t offset) {
  return guarded_mem("rknn_create_mem_from_mb_blk", [&]() -> rknn_tensor_mem* {
    (void)registry().context(ctx);
    (void)mb_blk;
    (void)offset;
    fail(RKNN_ERR_FAIL, "not supported on any platform (as on the board)");
  });
}

rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size) {
  return guarded_mem("rknn_create_mem", [&] {
    registry().require_owner(ctx);  // a model's context or a matmul context
    return registry().add_mem(HostMem::allocate(ctx, size, RKNN_FLAG_MEMORY_FLAGS_DEFAULT));
  });
}

rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags) {
  return guarded_mem("rknn_create_mem2", [&] {
    if ((alloc_flags & RKNN_MEM_FLAG_ALLOC_NO_CONTEXT) == 0) registry().require_owner(ctx);
    const rknn_context owner = (alloc_flags & RKNN_MEM_FLAG_ALLOC_NO_CONTEXT) ? 0 : ctx;
    return registry().add_mem(HostMem::allocate(owner, size, alloc_flags));
  });
}

int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return guarded("rknn_destroy_mem", [&] {
    require(mem, "mem");
    registry().remove_mem(ctx, mem);
  });
}

int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return guarded("rknn_set_weight_mem", [&] {
    auto context = registry().context(ctx);
    context->set_weight_mem(registry().mem(ctx, require(mem, "mem")));
  });
}

int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return guarded("rknn_set_internal_mem", [&] {
    auto context = registry().context(ctx);
    context->set_internal_mem(registry().mem(ctx, require(mem, "mem")));
  });
}

int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem* mem, rknn_tensor_attr* attr) {
  return guarded("rknn_set_io_mem", [&] {
    auto context = registry().context(ctx);
    context->set_io_mem(registry().mem(ctx, require(mem, "mem")), *require(attr, "attr"));
  });
}

int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr* attr) {
  return guarded("rknn_set_input_shape", [&] {
    (void)registry().context(ctx);
    (void)attr;
    fail(RKNN_ERR_FAIL, "deprecated and unavailable in this runtime version: use rknn_set_input_shapes");
  });
}

int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs, rknn_tensor_attr attr[]) {
  return guarded("rknn_set_input_shapes", [&] {
    auto context = registry().context(ctx);
    require(attr, "attr");
    context->set_input_shapes({attr, n_inputs});
  });
}

int rknn_mem_sync(rknn_context context, rknn_tensor_mem* mem, rknn_mem_sync_mode mode) {
  return guarded("rknn_mem_sync", [&] {
    // Memory made with RKNN_MEM_FLAG_ALLOC_NO_CONTEXT belongs to no context; other memory needs
    // its live context. Shared: another thread's rknn_destroy_mem cannot unmap it under the sync.
    const std::shared_ptr<HostMem> host_mem = registry().mem(context, require(mem, "mem"));
    if (host_mem->owner() != 0) registry().require_owner(context);
    switch (mode) {
      case RKNN_MEMORY_SYNC_TO_DEVICE: host_mem->sync_to_device(); break;
      case RKNN_MEMORY_SYNC_FROM_DEVICE: host_mem->sync_from_device(); break;
      case RKNN_MEMORY_SYNC_BIDIRECTIONAL:
        host_mem->sync_to_device();
        host_mem->sync_from_device();
        break;
      default: fail(RKNN_ERR_PARAM_INVALID, "mode {} is not a rknn_mem_sync_mode (1, 2 or 3)", static_cast<int>(mode));
    }
  });
}

int rknn_register_custom_ops(rknn_context ctx, rknn_custom_op* op, uint32_t custom_op_num) {
  return guarded("rknn_register_custom_ops", [&] {
    auto context = registry().context(ctx);
    require(op, "op");
    context->register_custom_ops({op, custom_op_num});
  });
}

void rknn_custom_op_get_op_attr(rknn_custom_op_context* op_ctx, const char* attr_name, rknn_custom_op_attr* op_attr) {
  CustomOps::get_attr(op_ctx, attr_name, op_attr);
}

}  // extern "C"
