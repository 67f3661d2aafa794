#pragma once
// What every oneDNN kernel of the engine shares (docs/runtime-extensions.md, "Threads"): the one CPU engine,
// and oneDNN's OpenMP limited to the calling pool worker while a primitive is made or run, so that oneDNN
// never starts an OpenMP team beside the engine's pool. Only in builds with oneDNN.

#if defined(RKNNXX_ENGINE_ONEDNN)
#include <dnnl.hpp>

#include <array>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

// The two OpenMP calls the engine makes, from libgomp (the runtime Debian's oneDNN uses; host/meson.build),
// declared here because clang ships no omp.h for it.
extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int threads);

namespace rknnxx::host {

// oneDNN's OpenMP limited to the calling thread while it lives (the setting is per thread), then restored.
class SerialOpenmp {
public:
  SerialOpenmp() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~SerialOpenmp() { omp_set_num_threads(saved_); }
  SerialOpenmp(const SerialOpenmp&) = delete;
  SerialOpenmp& operator=(const SerialOpenmp&) = delete;

private:
  int saved_;
};

// primitive.execute(stream, arguments) without the std::unordered_map that dnnl::primitive::execute takes: a
// handful of heap nodes made and freed on every call, for a kernel that runs in microseconds. An argument whose
// memory is nullptr is left out (an optional input the operator has not got, such as a Conv's bias).
inline void execute_primitive(const dnnl::primitive& primitive, const dnnl::stream& stream,
                              std::initializer_list<std::pair<int, const dnnl::memory*>> arguments) {
  std::array<dnnl_exec_arg_t, 8> args{};
  std::size_t count = 0;
  for (const auto& [kind, memory] : arguments) {
    if (memory == nullptr) continue;
    if (count == args.size()) throw dnnl::error(dnnl_invalid_arguments, "too many arguments for execute_primitive");
    args[count++] = {kind, memory->get()};
  }
  dnnl::error::wrap_c_api(dnnl_primitive_execute(primitive.get(), stream.get(), static_cast<int>(count), args.data()),
                          "could not execute a primitive");
}

inline const dnnl::engine& onednn_cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// A kernel's oneDNN objects per pool worker: a stream and `slots` memory objects, made the first time the worker
// runs the kernel and then pointed at each run's addresses (set_data_handle). Making them for every piece took
// about 2 µs of a MobileNetV3's Convs of 10 to 30. A worker uses only its own entry, and a session runs one plan
// at a time, so the entries need no lock.
class OnednnWorkers {
public:
  struct Objects {
    dnnl::stream stream;
    std::vector<dnnl::memory> memories;

    // Memory object `slot`, of `desc` (the same every time for a slot), pointed at `data`.
    dnnl::memory& point(std::size_t slot, const dnnl::memory::desc& desc, const void* data) {
      dnnl::memory& m = memories.at(slot);
      if (!m) m = dnnl::memory(desc, onednn_cpu_engine(), DNNL_MEMORY_NONE);
      m.set_data_handle(const_cast<void*>(data));
      return m;
    }
  };

  OnednnWorkers(std::size_t workers, std::size_t slots) : workers_(workers), slots_(slots) {}

  Objects& of(std::size_t worker) const {
    std::unique_ptr<Objects>& w = workers_.at(worker);
    if (!w) {
      w = std::make_unique<Objects>();
      w->stream = dnnl::stream(onednn_cpu_engine());
      w->memories.resize(slots_);
    }
    return *w;
  }

private:
  mutable std::vector<std::unique_ptr<Objects>> workers_;
  std::size_t slots_ = 0;
};

}  // namespace rknnxx::host

#endif
