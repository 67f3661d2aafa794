#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
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
// dynamic TLS blocks at exit and aborts. A bool fits glibc's static TLS reserve for dlopen.
[[gnu::tls_model("initial-exec")]] thread_local bool inside_parallel_for = false;

std::size_t thread_count_from_environment() noexcept {
  if (const char* env = std::getenv("RKNNXX_HOST_THREADS")) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n <= 1024) return n;
  }
  return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

// One loop in flight: its chunks, taken by the caller and by up to `helpers_wanted` workers.
struct Job {
  ThreadPool::Body body{};
  int64_t n = 0;
  int64_t chunk = 0;
  int64_t chunks = 0;
  std::atomic<int64_t> next{0};
  std::size_t helpers_wanted = 0;  // the share's size - 1
  std::size_t helpers = 0;         // workers that joined (under the mutex); their index is their order
  std::size_t active = 0;          // workers still running its chunks (under the mutex)
  std::exception_ptr error;        // the first exception (under the mutex)

  [[nodiscard]] bool wants_help() const noexcept {
    return helpers < helpers_wanted && next.load(std::memory_order_relaxed) < chunks;
  }
};

// The process's workers. Each open job takes helpers from them up to its share; a worker joins the
// open job with the fewest helpers, so concurrent loops split the workers between them.
class Workers {
public:
  static Workers& instance() {
    // Never destroyed: a session may still be running loops from another thread while static
    // destructors run at exit; the workers are daemon-like and die with the process.
    static Workers* workers = new Workers(default_thread_count() - 1);
    return *workers;
  }

  void run(Job& job) {
    if (job.helpers_wanted > 0) {
      {
        std::lock_guard lock(mutex_);
        open_.push_back(&job);
      }
      wake_.notify_all();
    }
    run_chunks(job, 0);
    if (job.helpers_wanted > 0) {
      std::unique_lock lock(mutex_);
      open_.erase(std::find(open_.begin(), open_.end(), &job));
      finished_.wait(lock, [&] { return job.active == 0; });
    }
    if (job.error) std::rethrow_exception(job.error);
  }

private:
  explicit Workers(std::size_t threads) {
    threads_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); }).detach();
  }

  Job* pick() const noexcept {
    Job* best = nullptr;
    for (Job* job : open_)
      if (job->wants_help() && (best == nullptr || job->helpers < best->helpers)) best = job;
    return best;
  }

  void work() {
    for (;;) {
      Job* job = nullptr;
      std::size_t index = 0;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return (job = pick()) != nullptr; });
        index = ++job->helpers;
        ++job->active;
      }
      run_chunks(*job, index);
      {
        std::lock_guard lock(mutex_);
        --job->active;
      }
      finished_.notify_all();
    }
  }

  void run_chunks(Job& job, std::size_t worker) {
    inside_parallel_for = true;
    for (;;) {
      const int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
      if (c >= job.chunks) break;
      const int64_t begin = c * job.chunk;
      const int64_t end = std::min(job.n, begin + job.chunk);
      try {
        job.body.call(job.body.object, begin, end, worker);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!job.error) job.error = std::current_exception();
      }
    }
    inside_parallel_for = false;
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
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

void ThreadPool::limit(std::size_t threads) noexcept { limit_ = std::clamp<std::size_t>(threads, 1, size_); }

void ThreadPool::run(int64_t n, int64_t grain, Body body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t most_chunks = (n + grain - 1) / grain;
  // A few chunks per thread balance uneven work without much scheduling cost.
  const int64_t chunks = std::min<int64_t>(most_chunks, static_cast<int64_t>(limit_) * 4);
  if (limit_ == 1 || chunks <= 1 || inside_parallel_for) {
    body.call(body.object, 0, n, 0);
    return;
  }
  Job job;
  job.body = body;
  job.n = n;
  job.chunk = (n + chunks - 1) / chunks;
  job.chunks = (n + job.chunk - 1) / job.chunk;
  job.helpers_wanted = limit_ - 1;
  Workers::instance().run(job);
}

}  // namespace rknnxx::host
