#pragma once
// The session's worker threads and the one parallel loop the kernels use.
// The calling thread takes part in every loop, so a pool of size 1 has no threads at all.
// A parallel_for inside a parallel_for runs serially in the calling worker.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace rknnxx::host {

// The thread count used when none is given: $RKNNXX_HOST_THREADS when it is a positive
// number, else std::thread::hardware_concurrency().
std::size_t default_thread_count() noexcept;

class ThreadPool {
public:
  // threads = 0: default_thread_count().
  explicit ThreadPool(std::size_t threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that execute a loop, the caller included.
  std::size_t size() const noexcept { return workers_.size() + 1; }

  // Calls f(begin, end, worker) over [0, n) in chunks of at least `grain` elements,
  // worker in [0, size()) naming the executing thread (for per-thread scratch memory).
  // Returns when every chunk has run; the first exception thrown by f is rethrown.
  template <class F> void parallel_for(int64_t n, int64_t grain, F&& f) {
    using Fn = std::remove_reference_t<F>;
    run(n, grain, Body{const_cast<void*>(static_cast<const void*>(&f)),
                       [](void* obj, int64_t b, int64_t e, std::size_t w) {
                         auto& fn = *static_cast<Fn*>(obj);
                         if constexpr (std::is_invocable_v<Fn&, int64_t, int64_t, std::size_t>) {
                           fn(b, e, w);
                         } else {
                           fn(b, e);
                         }
                       }});
  }

private:
  struct Body {
    void* object;
    void (*call)(void*, int64_t, int64_t, std::size_t);
  };
  struct Job;
  void run(int64_t n, int64_t grain, Body body);
  void work(std::size_t id);
  void run_chunks(Job& job, std::size_t worker);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  std::size_t active_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

} // namespace rknnxx::host
