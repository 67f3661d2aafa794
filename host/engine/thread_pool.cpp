#include "thread_pool.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace rknnxx::host {

namespace {

// initial-exec: the engine lives in a dlopen'ed runtime, and a global-dynamic thread_local would
// be reached through __tls_get_addr on every loop; GCC 12's LeakSanitizer also misreads such
// dynamic TLS blocks at exit and aborts. Small values fit glibc's static TLS reserve for dlopen.
[[gnu::tls_model("initial-exec")]] thread_local bool inside_parallel_for = false;
[[gnu::tls_model("initial-exec")]] thread_local unsigned compute_slot_depth = 0;  // ComputeSlot scopes

std::size_t thread_count_from_environment() noexcept {
  if (const char* env = std::getenv("RKNNXX_HOST_THREADS")) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n <= 1024) return n;
  }
  return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

// A run's loops follow each other within microseconds, and waking a sleeping thread costs tens of
// them: an idle worker, and a caller waiting for its helpers, spin this long before they sleep.
constexpr auto spin_time = std::chrono::microseconds(50);

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield");
#endif
}

// The mutex, after trying it for a moment: its critical sections are a few instructions, and waiting in the
// kernel for one costs a sleep and a wake (microseconds, a few times a loop) where its holder is about to let go.
std::unique_lock<std::mutex> lock_soon(std::mutex& mutex) {
  std::unique_lock lock(mutex, std::try_to_lock);
  for (int i = 0; i < 2000 && !lock.owns_lock(); ++i) {
    cpu_relax();
    (void)lock.try_lock();
  }
  if (!lock.owns_lock()) lock.lock();
  return lock;
}

// Spins until ready() or the deadline; returns ready().
template <class Ready> bool spin_until(std::chrono::steady_clock::time_point deadline, Ready ready) {
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

// One loop in flight: its chunks, taken by the caller and by up to `helpers_wanted` workers. Each of them starts
// on a range of its own, the same share of every loop (the caller the first): a thread then mostly reads the
// values it wrote in the loop before, from its own cache, where chunks taken in any order moved most of them
// from the other core's cache (docs/runtime-extensions.md, "Threads"). When its range is done it takes chunks
// from the others'.
struct Job {
  static constexpr std::size_t max_ranges = 16;  // more threads share one range

  ThreadPool::Body body{};
  int64_t n = 0;
  int64_t chunk = 0;
  int64_t chunks = 0;
  std::size_t ranges = 1;
  std::array<std::atomic<int64_t>, max_ranges> next{};  // range r's next chunk, below end[r]
  std::array<int64_t, max_ranges> end{};
  std::size_t helpers_wanted = 0;      // the share's size - 1
  std::size_t helpers = 0;             // workers that joined (under the mutex); their index is their order
  std::atomic<std::size_t> active{0};  // workers still running its chunks (changed under the mutex)
  std::exception_ptr error;            // the first exception (under the mutex)

  // Chunks in `ranges` ranges, one per thread of a share of `threads`.
  void split(std::size_t threads) noexcept {
    ranges = std::clamp<std::size_t>(threads, 1, max_ranges);
    const auto r = static_cast<int64_t>(ranges);
    for (int64_t i = 0; i < r; ++i) {
      next[static_cast<std::size_t>(i)].store(i * chunks / r, std::memory_order_relaxed);
      end[static_cast<std::size_t>(i)] = (i + 1) * chunks / r;
    }
  }
  [[nodiscard]] bool chunks_left() const noexcept {
    for (std::size_t r = 0; r < ranges; ++r)
      if (next[r].load(std::memory_order_relaxed) < end[r]) return true;
    return false;
  }
  [[nodiscard]] bool wants_help() const noexcept { return helpers < helpers_wanted && chunks_left(); }
};

// The process's workers and compute slots. Each open job takes helpers from the workers up to its
// share and while slots are free; a worker joins the open job with the fewest helpers, so
// concurrent loops split the workers between them.
class Workers {
public:
  static Workers& instance() {
    // Never destroyed: a session may still be running loops from another thread while static
    // destructors run at exit; the workers are daemon-like and die with the process.
    static Workers* workers = new Workers(default_thread_count());
    return *workers;
  }

  void acquire_slot() {
    auto lock = lock_soon(mutex_);
    slot_free_.wait(lock, [&] { return busy_.load(std::memory_order_relaxed) < slots_; });
    busy_.fetch_add(1, std::memory_order_relaxed);
  }

  void release_slot() {
    {
      const auto lock = lock_soon(mutex_);
      busy_.fetch_sub(1, std::memory_order_relaxed);
      posted_.fetch_add(1, std::memory_order_release);  // a worker may join an open job now
    }
    slot_free_.notify_one();
    wake_.notify_all();
  }

  void run(Job& job) {
    if (job.helpers_wanted > 0) {
      {
        const auto lock = lock_soon(mutex_);
        open_.push_back(&job);
        posted_.fetch_add(1, std::memory_order_release);
      }
      wake_.notify_all();
    }
    run_chunks(job, 0);
    if (job.helpers_wanted > 0) {
      {
        const auto lock = lock_soon(mutex_);
        open_.erase(std::find(open_.begin(), open_.end(), &job));
      }
      // The helpers are finishing their last chunks: usually a moment, so spin before sleeping.
      const auto done = [&] { return job.active.load(std::memory_order_acquire) == 0; };
      if (!spin_until(std::chrono::steady_clock::now() + spin_time, done)) {
        auto lock = lock_soon(mutex_);
        finished_.wait(lock, done);
      }
    }
    if (job.error) std::rethrow_exception(job.error);
  }

private:
  explicit Workers(std::size_t slots) : slots_(slots) {
    threads_.reserve(slots - 1);
    for (std::size_t i = 0; i + 1 < slots; ++i) threads_.emplace_back([this] { work(); }).detach();
  }

  // Under the mutex: the job a free worker should help, if a slot is free for it.
  Job* pick() const noexcept {
    if (busy_.load(std::memory_order_relaxed) >= slots_) return nullptr;
    Job* best = nullptr;
    for (Job* job : open_)
      if (job->wants_help() && (best == nullptr || job->helpers < best->helpers)) best = job;
    return best;
  }

  void work() {
    auto idle_since = std::chrono::steady_clock::now();
    for (;;) {
      Job* job = nullptr;
      std::size_t index = 0;
      {
        auto lock = lock_soon(mutex_);
        job = pick();
        if (job == nullptr) {
          // Nothing to do: watch for the next loop for a moment, then sleep until one is posted.
          const uint64_t seen = posted_.load(std::memory_order_acquire);
          lock.unlock();
          if (spin_until(idle_since + spin_time, [&] { return posted_.load(std::memory_order_acquire) != seen; }))
            continue;
          lock.lock();
          wake_.wait(lock, [&] { return (job = pick()) != nullptr; });
        }
        index = ++job->helpers;
        job->active.fetch_add(1, std::memory_order_relaxed);
        busy_.fetch_add(1, std::memory_order_relaxed);
      }
      compute_slot_depth = 1;
      run_chunks(*job, index);
      compute_slot_depth = 0;
      {
        const auto lock = lock_soon(mutex_);
        job->active.fetch_sub(1, std::memory_order_release);
        busy_.fetch_sub(1, std::memory_order_relaxed);
        posted_.fetch_add(1, std::memory_order_release);
      }
      finished_.notify_all();
      slot_free_.notify_one();
      idle_since = std::chrono::steady_clock::now();
    }
  }

  void run_chunks(Job& job, std::size_t worker) {
    inside_parallel_for = true;
    for (std::size_t k = 0; k < job.ranges; ++k) {  // its own range first, then the others'
      const std::size_t r = (worker + k) % job.ranges;
      for (;;) {
        const int64_t c = job.next[r].fetch_add(1, std::memory_order_relaxed);
        if (c >= job.end[r]) break;
        const int64_t begin = c * job.chunk;
        const int64_t end = std::min(job.n, begin + job.chunk);
        try {
          job.body.call(job.body.object, begin, end, worker);
        } catch (...) {
          const auto lock = lock_soon(mutex_);
          if (!job.error) job.error = std::current_exception();
        }
      }
    }
    inside_parallel_for = false;
  }

  const std::size_t slots_;           // threads that may compute at once, callers included
  std::atomic<std::size_t> busy_{0};  // slots held (changed under the mutex, read by spinners)
  std::atomic<uint64_t> posted_{0};   // counts jobs posted and slots freed, for spinning workers
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;       // workers: a job was posted or a slot freed
  std::condition_variable finished_;   // callers: a helper left a job
  std::condition_variable slot_free_;  // callers: a slot was freed
  std::vector<Job*> open_;
};

}  // namespace

std::size_t default_thread_count() noexcept {
  static const std::size_t count = thread_count_from_environment();
  return count;
}

ThreadPool::ThreadPool(std::size_t threads) {
  const std::size_t all = default_thread_count();
  size_ = threads == 0 ? all : std::min(threads, all);
  limit_ = size_;
}

ComputeSlot::ComputeSlot() {
  if (compute_slot_depth++ == 0) Workers::instance().acquire_slot();
}

ComputeSlot::~ComputeSlot() {
  if (--compute_slot_depth == 0) Workers::instance().release_slot();
}

ComputeSlotReleased::ComputeSlotReleased() : depth_(compute_slot_depth) {
  if (depth_ != 0) Workers::instance().release_slot();
  compute_slot_depth = 0;
}

ComputeSlotReleased::~ComputeSlotReleased() {
  if (depth_ != 0) Workers::instance().acquire_slot();
  compute_slot_depth = depth_;
}

void ThreadPool::limit(std::size_t threads) noexcept { limit_ = std::clamp<std::size_t>(threads, 1, size_); }

void ThreadPool::run(int64_t n, int64_t grain, Body body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t most_chunks = (n + grain - 1) / grain;
  // A few chunks per thread balance uneven work without much scheduling cost.
  const int64_t chunks = std::min<int64_t>(most_chunks, static_cast<int64_t>(limit_) * 4);
  if (inside_parallel_for) {  // a nested loop: this worker's share of the outer one, run serially
    body.call(body.object, 0, n, 0);
    return;
  }
  const ComputeSlot slot;  // the caller computes too
  if (limit_ == 1 || chunks <= 1) {
    body.call(body.object, 0, n, 0);
    return;
  }
  Job job;
  job.body = body;
  job.n = n;
  job.chunk = (n + chunks - 1) / chunks;
  job.chunks = (n + job.chunk - 1) / job.chunk;
  job.split(limit_);
  job.helpers_wanted = limit_ - 1;
  Workers::instance().run(job);
}

}  // namespace rknnxx::host
