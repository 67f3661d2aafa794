#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace rknnxx::host {

namespace {
// initial-exec: the engine lives in a dlopen'ed runtime, and a global-dynamic thread_local would
// be reached through __tls_get_addr on every loop; GCC 12's LeakSanitizer also misreads such
// dynamic TLS blocks at exit and aborts. A bool fits glibc's static TLS reserve for dlopen.
[[gnu::tls_model("initial-exec")]] thread_local bool inside_parallel_for = false;
}

struct ThreadPool::Job {
  Body body;
  int64_t n = 0;
  int64_t chunk = 0;
  int64_t chunks = 0;
  std::atomic<int64_t> next{0};
};

std::size_t default_thread_count() noexcept {
  if (const char* env = std::getenv("RKNNXX_HOST_THREADS")) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n <= 1024) {
      return n;
    }
  }
  return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool(std::size_t threads) {
  if (threads == 0) {
    threads = default_thread_count();
  }
  workers_.reserve(threads - 1);
  for (std::size_t i = 1; i < threads; ++i) {
    workers_.emplace_back([this, i] { work(i); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) {
    t.join();
  }
}

void ThreadPool::run(int64_t n, int64_t grain, Body body) {
  if (n <= 0) {
    return;
  }
  grain = std::max<int64_t>(1, grain);
  const int64_t most_chunks = (n + grain - 1) / grain;
  // A few chunks per thread balance uneven work without much scheduling cost.
  const int64_t chunks = std::min<int64_t>(most_chunks, static_cast<int64_t>(size()) * 4);
  if (workers_.empty() || chunks <= 1 || inside_parallel_for) {
    body.call(body.object, 0, n, 0);
    return;
  }
  Job job;
  job.body = body;
  job.n = n;
  job.chunk = (n + chunks - 1) / chunks;
  job.chunks = (n + job.chunk - 1) / job.chunk;
  {
    std::lock_guard lock(mutex_);
    job_ = &job;
    ++generation_;
    error_ = nullptr;
  }
  wake_.notify_all();
  run_chunks(job, 0);
  std::exception_ptr error;
  {
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return active_ == 0; });
    job_ = nullptr;
    error = std::exchange(error_, nullptr);
  }
  if (error) {
    std::rethrow_exception(error);
  }
}

void ThreadPool::run_chunks(Job& job, std::size_t worker) {
  inside_parallel_for = true;
  for (;;) {
    const int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.chunks) {
      break;
    }
    const int64_t begin = c * job.chunk;
    const int64_t end = std::min(job.n, begin + job.chunk);
    try {
      job.body.call(job.body.object, begin, end, worker);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) {
        error_ = std::current_exception();
      }
    }
  }
  inside_parallel_for = false;
}

void ThreadPool::work(std::size_t id) {
  uint64_t seen = 0;
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || (generation_ != seen && job_ != nullptr); });
      if (stop_) {
        return;
      }
      seen = generation_;
      job = job_;
      ++active_;
    }
    run_chunks(*job, id);
    {
      std::lock_guard lock(mutex_);
      --active_;
    }
    finished_.notify_all();
  }
}

} // namespace rknnxx::host
