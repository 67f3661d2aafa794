#pragma once
// What every oneDNN kernel of the engine shares (docs/runtime-extensions.md, "Threads"): the one CPU engine,
// and oneDNN's OpenMP limited to the calling pool worker while a primitive is made or run, so that oneDNN
// never starts an OpenMP team beside the engine's pool. Only in builds with oneDNN.

#if defined(RKNNXX_ENGINE_ONEDNN)
#include <dnnl.hpp>

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

inline const dnnl::engine& onednn_cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

}  // namespace rknnxx::host

#endif
