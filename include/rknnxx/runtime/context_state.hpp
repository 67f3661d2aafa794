#pragma once
// The state a Context shares with the objects made from it (Mem, Outputs, IoBinding), so that a
// child never outlives its context unnoticed: when the Context goes, the state is marked dead,
// the child's memory is destroyed with it, and every later use of the child throws.
// Internal to rknnxx (namespace detail); applications use Context, Mem and IoBinding.

#include <rknnxx/core/error.hpp>
#include <rknnxx/core/platform.hpp>
#include <rknnxx/core/shape_set.hpp>
#include <rknnxx/core/std_light.hpp>  // std::shared_ptr
#include <rknnxx/runtime/flags.hpp>
#include <rknnxx/runtime/loader.hpp>
#include <rknnxx/tensor/attr.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Thread-use checks (one thread uses a context at a time) are on in debug builds; define
// RKNNXX_THREAD_CHECKS to 1 or 0 to force them either way.
#ifndef RKNNXX_THREAD_CHECKS
#ifdef NDEBUG
#define RKNNXX_THREAD_CHECKS 0
#else
#define RKNNXX_THREAD_CHECKS 1
#endif
#endif

namespace rknnxx {

struct IoCount {
  std::uint32_t inputs = 0;
  std::uint32_t outputs = 0;
  friend bool operator==(const IoCount&, const IoCount&) = default;
};

struct ContextOptions {
  InitFlags flags{};
  std::shared_ptr<const Runtime> runtime{};  // null: Runtime::load() (RKNNXX_RUNTIME, vendor, host)
  std::optional<Platform> platform{};        // when known: core masks and core counts are checked against it
};

}  // namespace rknnxx

namespace rknnxx::detail {

struct MemLife;  // mem.hpp

// A C++ custom operator registered on a context (runtime/custom_op.hpp's CustomOpBinding) as Context::run
// sees it: the exception its callable threw explains a failed run. An interface, so that the context's bodies
// compile without the custom-operator header (<functional>, <mutex>, 64 trampolines): only translation units
// that register operators pay for it (docs/separate-compilation.md#compile-cost).
class RegisteredCustomOp {
public:
  virtual ~RegisteredCustomOp() = default;
  // The message of the last exception the operator's callable threw (cleared when read), or empty.
  [[nodiscard]] virtual std::string take_error() = 0;
};

// A token that names the calling thread: the address of a thread-local object, distinct for every
// live thread. (std::thread::id would do as well, but costs every application's translation unit
// <thread>, a third of the standard headers' parse time in the umbrella.)
const void* this_thread_token() noexcept;

// An Error's message followed by what the runtime logged about the failure of `call`, when it
// can tell (Runtime::last_error): "model file m.onnx (runtime ...): the runtime says: ...".
std::string with_runtime_message(std::string message, const Runtime& runtime, std::string_view call);

struct ContextState {
  std::shared_ptr<const Runtime> runtime;
  rknn_context handle = 0;
  bool alive = true;                       // false once the Context is destroyed or has released its handle
  bool released = false;                   // the handle went to C code (Context::release), nothing was destroyed
  bool unbound = false;                    // the pseudo-context of memory made with RKNN_MEM_FLAG_ALLOC_NO_CONTEXT
  std::uint64_t generation = 0;            // bumped by every shape switch
  std::uint64_t bound_generation = 0;      // the generation the zero-copy bindings were made for
  bool has_bindings = false;               // an IoBinding bound memory through rknn_set_io_mem
  std::vector<rknn_tensor_mem*> mems;      // live memory made through this context
  std::vector<rknn_output> outputs;        // buffers rknn_outputs_get gave out and Outputs still holds
  std::vector<TensorInfo> current_inputs;  // the inputs' attributes for the current shape
  std::vector<TensorInfo> current_outputs;
  // C++ custom operators registered on the context (Context::register_custom_op): kept until the
  // state goes, after rknn_destroy, so that no callback runs without its callable.
  std::vector<std::shared_ptr<RegisteredCustomOp>> custom_ops;
  // this_thread_token() of the thread that uses it; read and written atomically in the bodies only, with
  // the compilers' __atomic builtins, so that no translation unit needs <atomic>
  // (docs/separate-compilation.md#compile-cost)
  const void* owner = nullptr;
  ContextOptions options{};
  IoCount io{};
  std::optional<ShapeSet<>> shapes;  // the model's shape set; nullopt for static shapes
  bool shapes_probed = false;        // shapes was read (on first use: Context::shape_set)
  std::optional<std::size_t> group;  // the group of the last set_input_shapes
  // What IoBinding bound last to each tensor (by label, e.g. `input 0 "data"`): the runtime keeps
  // using that memory, so a run after it was destroyed (with its IoBinding, or by the
  // application's Mem) is refused instead of reading freed memory.
  struct BoundMem {
    std::string label;
    std::shared_ptr<MemLife> life;
    bool app_owned = false;
  };
  std::vector<BoundMem> bound;

  [[nodiscard]] const ApiTable& api() const noexcept { return runtime->api(); }

  // The thread rule: one thread uses a context at a time. The first call claims it; a call from
  // another thread before the owner calls Context::release_thread() is refused (debug builds).
  void enter(std::string_view call);
  // Gives up the claim (Context::release_thread): the next thread to call claims it.
  void leave() noexcept;

  void check_alive(std::string_view call, std::string_view what) const;

  // A runtime return code to an Error naming the call, the tensor, the runtime and what the
  // runtime said about it.
  void check(int rc, std::string_view call, TensorId tensor = {}, std::string_view message = {}) const;
  [[noreturn]] void fail(Errc code, std::string_view call, std::string_view message, TensorId tensor = {}) const;

  template <class F> F require(F f, std::string_view call) const {
    if (f == nullptr)
      throw Error(Errc::fail, std::string(call),
                  detail::message("the runtime {} does not provide {}", runtime->path(), call));
    return f;
  }

  void forget_outputs(const std::vector<rknn_output>& given) noexcept;

  void forget_mem(rknn_tensor_mem* m) noexcept;
};

// The state of a context on `runtime` (handle 0: memory made without a context, Mem::allocate_without_context).
std::shared_ptr<ContextState> new_context_state(std::shared_ptr<const Runtime> runtime, rknn_context handle);

}  // namespace rknnxx::detail

#ifndef RKNNXX_SEPARATE_COMPILATION
#include <rknnxx/runtime/impl/context_state.hpp>
#endif
