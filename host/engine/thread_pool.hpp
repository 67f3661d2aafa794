#pragma once
// The engine's threads and the one parallel loop the kernels use.
//
// A process has one set of worker threads, started on first use and sized by default_thread_count()
// (docs/runtime-extensions.md#threads). Every session, and so every context of the host runtime, runs its
// loops on a ThreadPool: a share of those workers, never threads of its own. And at most
// default_thread_count() threads compute at once, callers and workers together (ComputeSlot): N
// contexts run from N threads take turns on the cores instead of oversubscribing them.
//
// The calling thread takes part in every loop, so a share of size 1 runs serially. Loops of different
// shares run at the same time, each on at most its size in threads. A parallel_for inside a
// parallel_for runs serially in the calling worker.

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace rknnxx::host {

// The threads of the process's pool, the caller of a loop included: $RKNNXX_HOST_THREADS when it
// is a number from 1 to 1024, else std::thread::hardware_concurrency(). Read once, at first use.
std::size_t default_thread_count() noexcept;

// While alive, the calling thread holds one of the process's default_thread_count() compute slots,
// waiting for one if every slot is taken. A session's run holds one; a pool's loop takes one for its
// caller if it holds none, and each worker holds one while it helps. Scopes nest: a thread holds
// at most one slot, however deep.
class ComputeSlot {
public:
  ComputeSlot();
  ~ComputeSlot();
  ComputeSlot(const ComputeSlot&) = delete;
  ComputeSlot& operator=(const ComputeSlot&) = delete;
};

// Gives up the calling thread's slot, if it holds one, until destroyed: around code that may wait for
// another thread's run (an application's callback), which could otherwise wait for this slot forever.
class ComputeSlotReleased {
public:
  ComputeSlotReleased();
  ~ComputeSlotReleased();
  ComputeSlotReleased(const ComputeSlotReleased&) = delete;
  ComputeSlotReleased& operator=(const ComputeSlotReleased&) = delete;

private:
  unsigned depth_;
};

class ThreadPool {
public:
  // threads = 0: all of the process's threads; otherwise at most that many (and at most all).
  explicit ThreadPool(std::size_t threads = 0);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The threads a loop may use, the caller included; worker indices are below it.
  std::size_t size() const noexcept { return size_; }
  // Lowers (or restores, up to the size given at construction) the threads later loops use, e.g. for a
  // context's core-mask share. Indices stay below size(), so per-thread scratch planned for it holds.
  void limit(std::size_t threads) noexcept;
  std::size_t limit() const noexcept { return limit_; }

  // Calls f(begin, end, worker) over [0, n) in chunks of at least `grain` elements,
  // worker in [0, size()) naming the executing thread (for per-thread scratch memory).
  // Returns when every chunk has run; the first exception thrown by f is rethrown.
  template <class F> void parallel_for(int64_t n, int64_t grain, F&& f) {
    using Fn = std::remove_reference_t<F>;
    run(n, grain,
        Body{const_cast<void*>(static_cast<const void*>(&f)), [](void* obj, int64_t b, int64_t e, std::size_t w) {
               auto& fn = *static_cast<Fn*>(obj);
               if constexpr (std::is_invocable_v<Fn&, int64_t, int64_t, std::size_t>) {
                 fn(b, e, w);
               } else {
                 fn(b, e);
               }
             }});
  }

  struct Body {
    void* object;
    void (*call)(void*, int64_t, int64_t, std::size_t);
  };

private:
  void run(int64_t n, int64_t grain, Body body);

  std::size_t size_ = 1;
  std::size_t limit_ = 1;
};

}  // namespace rknnxx::host
