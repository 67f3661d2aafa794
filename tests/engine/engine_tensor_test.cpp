// Tensors, float16 rounding, broadcasting, the thread pool, the arena planner and the GEMM.

#include "broadcast.hpp"
#include "engine_test_model.hpp"
#include "gemm.hpp"
#include "thread_pool.hpp"
#include "vector_state.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>
#include <numeric>
#include <stdexcept>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

TEST_SUITE("engine.tensor") {
  TEST_CASE("float16 conversion rounds to nearest even and handles the edges") {
    CHECK(float_to_half_bits(1.0f) == 0x3C00);
    CHECK(float_to_half_bits(-2.0f) == 0xC000);
    CHECK(float_to_half_bits(65504.0f) == 0x7BFF);
    CHECK(float_to_half_bits(65519.0f) == 0x7BFF);
    CHECK(float_to_half_bits(65520.0f) == 0x7C00);  // ties to even: overflow
    CHECK(float_to_half_bits(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(float_to_half_bits(std::ldexp(1.0f, -25)) == 0x0000);             // tie to even zero
    CHECK(float_to_half_bits(std::ldexp(1.5f, -25)) == 0x0001);             // above the tie
    CHECK(float_to_half_bits(std::ldexp(1.0f, -14)) == 0x0400);             // smallest normal
    CHECK(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);      // tie, even stays
    CHECK(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);  // tie, odd rounds up
    CHECK(std::isnan(half_bits_to_float(float_to_half_bits(std::nanf("")))));
    CHECK(half_bits_to_float(0x7C00) == std::numeric_limits<float>::infinity());
    CHECK(half_bits_to_float(0x0001) == std::ldexp(1.0f, -24));
    // round_to_half agrees with the round trip on every kind of value
    for (float v : {0.1f, -0.1f, 1e-6f, -3e-5f, 70000.0f, 65519.9f, 1.0f / 3.0f, 12345.678f, 6e-8f, 0.0f}) {
      CHECK(round_to_half(v) == half_bits_to_float(float_to_half_bits(v)));
    }
    CHECK(round_to_half(0.1f) == doctest::Approx(0.0999755859375f));
  }

  TEST_CASE("every array round_to_half (portable, the CPU's F16C or NEON, the chosen one) gives the scalar bits") {
    // The exact edges; every float16 value's float, the floats on each side of it and of each midpoint to the
    // next one (every rounding boundary, ties included, of both signs, through subnormals and the overflow
    // edge); a sweep over all float bit patterns (a prime step through NaNs with payloads). Arrays of every
    // length 1..17 check the tails of the 4- and 8-lane loops.
    std::vector<std::uint32_t> patterns{0x00000000u, 0x80000000u, 0x33000000u, 0x33000001u, 0x38800000u, 0x387FFFFFu,
                                        0x477FEFFFu, 0x477FF000u, 0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC12345u,
                                        0x00000001u, 0x807FFFFFu, 0x7FBFFFFFu, 0xFFFFFFFFu};
    for (std::uint32_t h = 0; h <= 0xFFFFu; ++h) {
      const float value = half_bits_to_float(static_cast<std::uint16_t>(h));
      std::vector<std::uint32_t> edges{std::bit_cast<std::uint32_t>(value)};
      if ((h & 0x7FFFu) < 0x7BFFu) {  // finite below the largest: the tie with the next value away from zero
        const float next = half_bits_to_float(static_cast<std::uint16_t>(h + 1u));
        edges.push_back(std::bit_cast<std::uint32_t>(
            static_cast<float>((static_cast<double>(value) + static_cast<double>(next)) * 0.5)));
      }
      for (std::uint32_t edge : edges) {
        for (std::uint32_t d : {0u, 1u, 2u, 0xFFFFFFFFu}) patterns.push_back(edge + d);
      }
    }
    for (std::uint64_t u = 0; u <= 0xFFFFFFFFu; u += 65521) patterns.push_back(static_cast<std::uint32_t>(u));
    std::vector<float> values;
    for (std::uint32_t p : patterns) values.push_back(std::bit_cast<float>(p));
    std::vector<std::pair<const char*, detail::HalfRounder>> rounders{
        {"portable", &detail::round_to_half_portable},
        {"chosen", [](float* data, std::size_t count) noexcept { round_to_half(data, count); }}};
    const std::vector<detail::HalfRounder> hardware = detail::hardware_half_rounders();
    for (std::size_t h = 0; h < hardware.size(); ++h)
      rounders.emplace_back(h == 0 ? "hardware (widest)" : "hardware (narrower)", hardware[h]);
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) CHECK(hardware.size() == 2);  // AVX-512 and F16C
#endif
#if defined(__aarch64__)
    const bool has_neon = detail::hardware_round_to_half() != nullptr;  // NEON is part of every aarch64 CPU
    CHECK(has_neon);
#endif
    std::vector<std::uint32_t> want;
    for (float v : values) want.push_back(std::bit_cast<std::uint32_t>(round_to_half(v)));
    for (const auto& [name, rounder] : rounders) {
      CAPTURE(name);
      std::size_t wrong = 0;
      auto check = [&, rounder = rounder, name = name](std::size_t start, std::size_t length) {
        std::vector<float> rounded(values.begin() + static_cast<std::ptrdiff_t>(start),
                                   values.begin() + static_cast<std::ptrdiff_t>(start + length));
        rounder(rounded.data(), rounded.size());
        // The SSE code after it runs at full speed (vector_state.hpp).
        if (const std::optional<bool> in_use = rknnxx::test::upper_vector_halves_in_use(); in_use && *in_use)
          FAIL_CHECK(fmt::format("{}: leaves the upper halves of the vector registers in use", name));
        for (std::size_t i = 0; i < length; ++i) {
          const std::uint32_t got = std::bit_cast<std::uint32_t>(rounded[i]);
          if (got != want[start + i] && ++wrong <= 10)
            FAIL_CHECK(fmt::format("{}: {:08x} rounds to {:08x}, want {:08x}", name, patterns[start + i], got,
                                   want[start + i]));
        }
      };
      check(0, values.size());                                // every value, in the main loop
      for (std::size_t length = 1; length <= 17; ++length) {  // the tails, on the edges listed first
        for (std::size_t start = 0; start + length <= 4096; start += length) check(start, length);
      }
      CHECK(wrong == 0);
    }
  }

  TEST_CASE("owning tensors are zeroed, 64-byte aligned, and copy deeply; views do not own") {
    Tensor t(DataType::float32, {3, 5});
    CHECK(t.elements() == 15);
    CHECK(t.bytes() == 60);
    CHECK(reinterpret_cast<uintptr_t>(t.raw()) % 64 == 0);
    CHECK(t.values<float>()[7] == 0.0f);
    t.data<float>()[0] = 4.0f;
    Tensor copy = t;
    copy.data<float>()[0] = 5.0f;
    CHECK(t.data<float>()[0] == 4.0f);
    Tensor v = Tensor::view(DataType::float32, {3, 5}, t.raw());
    CHECK_FALSE(v.owns_storage());
    Tensor view_copy = v;
    CHECK(view_copy.raw() == t.raw());
    CHECK(v.clone().owns_storage());
    CHECK_THROWS_AS(t.data<int32_t>(), EngineError);
    auto i = Tensor::from<int64_t>({2}, {7, 9});
    CHECK(i.values<int64_t>()[1] == 9);
    CHECK_THROWS_AS(Tensor::from<float>({3}, {1.0f}), EngineError);
    CHECK(Tensor::scalar<float>(2.5f).rank() == 0);
  }

  TEST_CASE("initializers decode from raw_data and the typed fields") {
    onnx::TensorProto p;
    p.name = "w";
    p.data_type = DataType::float32;
    p.dims = {2};
    p.float_data = {1.5f, -2.0f};
    CHECK(tensor_from_proto(p).values<float>()[1] == -2.0f);
    p.data_type = DataType::int8;
    p.float_data.clear();
    p.int32_data = {-3, 100};
    CHECK(tensor_from_proto(p).values<int8_t>()[0] == -3);
    p.data_type = DataType::boolean;
    p.int32_data = {1, 0};
    CHECK(tensor_from_proto(p).values<bool>()[0]);
    p.data_type = DataType::int64;
    p.int32_data.clear();
    p.int64_data = {1, 2};
    CHECK(tensor_from_proto(p).values<int64_t>()[1] == 2);
    auto f = Tensor::from<float>({3}, {1, 2, 3});
    CHECK(tensor_from_proto(to_proto("x", f)).values<float>()[2] == 3.0f);

    p.int64_data = {1};
    CHECK(error_of([&] { tensor_from_proto(p); }).find("tensor 'w'") != std::string::npos);
    p.data_type = DataType::complex64;
    CHECK(error_of([&] { tensor_from_proto(p); }).find("complex64") != std::string::npos);
    p.data_type = DataType::bfloat16;  // bits in int32_data, as float16's
    p.int32_data = {0x3fc0, 0xc100};
    CHECK(tensor_from_proto(p).values<bfloat16>()[0].bits == 0x3fc0);
    CHECK(bfloat16_bits_to_float(tensor_from_proto(p).values<bfloat16>()[1].bits) == -8.0f);
    p.int32_data.clear();
    p.data_type = DataType::float32;
    p.has_external_data = true;
    CHECK(error_of([&] { tensor_from_proto(p); }).find("external data") != std::string::npos);
  }

  TEST_CASE("broadcast shapes follow numpy and report incompatible shapes") {
    std::string error;
    std::vector<std::vector<int64_t>> shapes{{2, 1, 4}, {3, 1}};
    CHECK(broadcast_shape(shapes, error) == std::vector<int64_t>{2, 3, 4});
    CHECK(error.empty());
    shapes = {{2, 3}, {4}};
    broadcast_shape(shapes, error);
    CHECK(error == "shapes [2, 3] and [4] cannot be broadcast together");
    // Per-channel broadcast becomes contiguous runs
    shapes = {{2, 3, 4, 5}, {1, 3, 1, 1}};
    Broadcast bc(shapes);
    int64_t runs = 0;
    bc.for_each_run(0, bc.elements(),
                    [&](int64_t o, std::span<const int64_t> off, std::span<const int64_t> st, int64_t n) {
                      CHECK(n == 20);
                      CHECK(st[0] == 1);
                      CHECK(st[1] == 0);
                      CHECK(off[0] == o);
                      CHECK(off[1] == (o / 20) % 3);
                      ++runs;
                    });
    CHECK(runs == 6);
  }

  TEST_CASE("the thread pool covers every index once, rethrows, and runs nested loops serially") {
    for (std::size_t wanted : {1, 2, 4}) {
      const std::size_t threads = test_threads(wanted);
      ThreadPool pool(threads);
      CHECK(pool.size() == threads);
      for (int round = 0; round < 20; ++round) {
        std::vector<std::atomic<int>> hits(1000);
        pool.parallel_for(1000, 7, [&](int64_t b, int64_t e, std::size_t worker) {
          CHECK(worker < threads);
          for (int64_t i = b; i < e; ++i) {
            hits[static_cast<std::size_t>(i)]++;
          }
        });
        CHECK(std::all_of(hits.begin(), hits.end(), [](const auto& h) { return h == 1; }));
      }
      CHECK_THROWS_AS(pool.parallel_for(100, 1,
                                        [](int64_t b, int64_t e) {
                                          if (b <= 50 && 50 < e) throw std::runtime_error("boom");
                                        }),
                      std::runtime_error);
      std::atomic<int64_t> total{0};
      pool.parallel_for(10, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          pool.parallel_for(10, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
        }
      });
      CHECK(total == 100);
    }
  }

  TEST_CASE("pools share the process's threads: concurrent loops never run more bodies at once than them") {
    // Four sessions' pools used from four threads at once: every loop covers its range exactly once,
    // worker indices stay below each pool's size, and at no moment do more threads run loop bodies
    // than the process's threads (the callers wait for a compute slot).
    constexpr std::size_t callers = 4;
    std::atomic<int> running{0};
    std::atomic<int> most{0};
    std::atomic<bool> failed{false};
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < callers; ++t) {
      threads.emplace_back([&, t] {
        ThreadPool pool(t + 1);
        for (int round = 0; round < 30; ++round) {
          std::vector<std::atomic<int>> hits(500);
          pool.parallel_for(500, 3, [&](int64_t b, int64_t e, std::size_t worker) {
            const int now = ++running;
            int seen = most.load();
            while (now > seen && !most.compare_exchange_weak(seen, now)) {}
            if (worker >= pool.size()) failed = true;
            for (int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)]++;
            --running;
          });
          if (!std::all_of(hits.begin(), hits.end(), [](const auto& h) { return h == 1; })) failed = true;
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK_FALSE(failed.load());
    CHECK(static_cast<std::size_t>(most.load()) <= default_thread_count());
  }

  TEST_CASE("a thread that gives up its compute slot lets as many others compute as the process has threads") {
    // What keeps an application's custom-op callback, which may wait for other threads' runs, from
    // waiting forever for the slot its own run holds.
    const std::size_t all = default_thread_count();
    std::mutex mutex;
    std::condition_variable changed;
    std::size_t inside = 0;
    bool done = false, all_inside = false;
    {
      const ComputeSlot mine;
      std::vector<std::thread> others;
      {
        const ComputeSlotReleased released;
        for (std::size_t i = 0; i < all; ++i) {
          others.emplace_back([&] {
            const ComputeSlot slot;
            std::unique_lock lock(mutex);
            ++inside;
            changed.notify_all();
            changed.wait(lock, [&] { return done; });
          });
        }
        std::unique_lock lock(mutex);
        all_inside = changed.wait_for(lock, std::chrono::seconds(20), [&] { return inside == all; });
        done = true;
        changed.notify_all();
      }
      for (auto& t : others) t.join();
    }
    CHECK(all_inside);
  }

  TEST_CASE("a pool's limit lowers the threads of later loops and never raises them past its size") {
    ThreadPool pool(test_threads(4));
    pool.limit(1);
    CHECK(pool.limit() == 1);
    std::set<std::thread::id> ids;
    std::mutex mutex;
    pool.parallel_for(1000, 1, [&](int64_t, int64_t, std::size_t worker) {
      CHECK(worker == 0);
      std::lock_guard lock(mutex);
      ids.insert(std::this_thread::get_id());
    });
    CHECK(ids == std::set<std::thread::id>{std::this_thread::get_id()});
    pool.limit(1000);
    CHECK(pool.limit() == pool.size());
    pool.limit(0);
    CHECK(pool.limit() == 1);
  }

  TEST_CASE("a loop's threads each start on a range of their own: a helper of two begins at the second half") {
    // Eight chunks on two threads: the caller's range is [0, 4), the helper's [4, 8). The caller's first chunk
    // waits for the helper's first, which is then the start of the helper's own range, not the next chunk of a
    // queue (1). Without a helper within two seconds (a loaded machine) there is nothing to check.
    ThreadPool pool(test_threads(2));
    if (pool.size() < 2) return;
    std::atomic<int64_t> helper_first{-1};
    pool.parallel_for(8, 1, [&](int64_t begin, int64_t, std::size_t worker) {
      if (worker != 0) {
        int64_t none = -1;
        helper_first.compare_exchange_strong(none, begin);
        return;
      }
      if (begin != 0) return;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (helper_first.load() < 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    });
    if (helper_first.load() < 0) {
      MESSAGE("no helper joined within two seconds: nothing to check");
      return;
    }
    CHECK(helper_first.load() == 4);
  }

  TEST_CASE("the arena planner never overlaps live blocks and reuses dead ones") {
    std::vector<ArenaBlock> blocks;
    for (int32_t i = 0; i < 20; ++i) {
      blocks.push_back(ArenaBlock{static_cast<std::size_t>(1000 + 37 * (i % 5)), i, i + 1, 0});
    }
    blocks.push_back(ArenaBlock{5000, 0, 20, 0});
    const std::size_t arena = plan_arena(blocks);
    std::size_t sum = 0;
    for (std::size_t a = 0; a < blocks.size(); ++a) {
      sum += blocks[a].bytes;
      CHECK(blocks[a].offset % 64 == 0);
      CHECK(blocks[a].offset + blocks[a].bytes <= arena);
      for (std::size_t b = a + 1; b < blocks.size(); ++b) {
        const bool live_together = blocks[a].first <= blocks[b].last && blocks[b].first <= blocks[a].last;
        const bool disjoint = blocks[a].offset + blocks[a].bytes <= blocks[b].offset ||
            blocks[b].offset + blocks[b].bytes <= blocks[a].offset;
        CHECK((!live_together || disjoint));
      }
    }
    CHECK(arena < sum / 3);
  }

  TEST_CASE("gemm agrees with the naive loop for every transposition and beta, and for one row or column") {
    ThreadPool pool(test_threads(3));
    // 37 x 129: the general product; 1 x 1029 and 517 x 1: Eigen's matrix-vector kernels (gemm_eigen.hpp).
    // Leading dimensions wider than the matrices (+3) check the strides of both paths.
    for (const auto [m, n, k] : {std::array<int64_t, 3>{37, 129, 23}, {1, 1029, 70}, {517, 1, 70}}) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          for (float beta : {0.0f, 1.0f, 0.5f}) {
            CAPTURE(m);
            CAPTURE(n);
            CAPTURE(ta);
            CAPTURE(tb);
            const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 3, ldc = n + 3;
            const auto a = random_floats(static_cast<std::size_t>((ta ? k : m) * lda), 1);
            const auto b = random_floats(static_cast<std::size_t>((tb ? n : k) * ldb), 2);
            auto c1 = random_floats(static_cast<std::size_t>(m * ldc), 3);
            auto c2 = c1;
            parallel_gemm(pool, ta, tb, m, n, k, 0.75f, a.data(), lda, b.data(), ldb, beta, c1.data(), ldc);
            naive_gemm(ta, tb, m, n, k, 0.75f, a.data(), lda, b.data(), ldb, beta, c2.data(), ldc);
            for (std::size_t i = 0; i < c1.size(); ++i) {
              REQUIRE(c1[i] == doctest::Approx(c2[i]).epsilon(1e-4));
            }
          }
        }
      }
    }
  }
}
