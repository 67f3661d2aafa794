// rknnxx bench MODEL [--input FILE...] [--shape S...] [-n N] [--warmup W] [--core-mask M] [--threads T] [--json]
//
// Times the general API phase by phase (rknn_inputs_set, rknn_run, rknn_outputs_get+release, and
// the three together), then the zero-copy path (copy into bound memory with its cache sync, run,
// sync of the outputs), then, with --threads T > 1, T contexts (dup) run in parallel for the
// throughput of a pool. The vendor's own figures time rknn_run alone; the marshalling around it
// is often as large (docs/c-interface.md#marshalling), hence each phase separately.

#include "commands.hpp"
#include "input_file.hpp"
#include "model_report.hpp"
#include "progress.hpp"
#include "timing.hpp"

#include <rknnxx/runtime/io_binding.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rknnxx::tool {

namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

struct Phases {
  std::vector<double> set, run, get, total;
  void reserve(std::size_t n) { set.reserve(n), run.reserve(n), get.reserve(n), total.reserve(n); }
};

void general_iteration(Context& ctx, const std::vector<InputFile>& inputs, Phases* record) {
  const auto t0 = Clock::now();
  set_inputs(ctx, inputs);
  const auto t1 = Clock::now();
  ctx.run();
  const auto t2 = Clock::now();
  { const auto out = ctx.outputs(); }
  const auto t3 = Clock::now();
  if (record) {
    record->set.push_back(ms(t0, t1));
    record->run.push_back(ms(t1, t2));
    record->get.push_back(ms(t2, t3));
    record->total.push_back(ms(t0, t3));
  }
}

nlohmann::json summary_json(const TimingSummary& s) {
  return {{"count", s.count},   {"min_ms", s.min_ms},   {"median_ms", s.median_ms},
          {"p99_ms", s.p99_ms}, {"mean_ms", s.mean_ms}, {"max_ms", s.max_ms}};
}

nlohmann::json phases_json(const Phases& p, const char* set_name, const char* get_name) {
  const auto total = summarize(p.total);
  return {{set_name, summary_json(summarize(p.set))},
          {"run", summary_json(summarize(p.run))},
          {get_name, summary_json(summarize(p.get))},
          {"total", summary_json(total)},
          {"throughput_per_s", total.median_ms > 0 ? 1000.0 / total.median_ms : 0.0}};
}

// The phases in the order they happen (JSON objects keep their keys sorted).
void print_phases(const std::string& title, const nlohmann::json& j, const char* set_name, const char* get_name,
                  const char* throughput_rule = "1 / median total") {
  fmt::print("{}\n  {:<14} {:>10} {:>10} {:>10} {:>10}\n", title, "phase", "min ms", "median ms", "p99 ms", "mean ms");
  for (const char* name : {set_name, "run", get_name, "total"}) {
    const auto& s = j[name];
    fmt::print("  {:<14} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}\n", name, s["min_ms"].get<double>(),
               s["median_ms"].get<double>(), s["p99_ms"].get<double>(), s["mean_ms"].get<double>());
  }
  fmt::print("  throughput     {:.2f} inferences/s ({})\n", j["throughput_per_s"].get<double>(), throughput_rule);
}

}  // namespace

int bench(const BenchOptions& o) {
  if (o.loops == 0) throw std::runtime_error("-n/--loops must be at least 1");
  if (o.threads == 0) throw std::runtime_error("--threads must be at least 1");
  auto ctx = open_model(o.model);
  nlohmann::json j;
  j["model"] = o.model;
  j["runtime"] = {{"kind", ctx.runtime().is_host() ? "host" : "vendor"}, {"path", ctx.runtime().path()}};
  if (!o.json) fmt::print("{}\n", runtime_line(ctx));
  if (!o.core_mask.empty()) ctx.set_core_mask(parse_core_mask(o.core_mask));
  j["core_mask"] = o.core_mask.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.core_mask);
  const std::string shape = select_shape(ctx, o.shapes, o.inputs);
  if (!o.json && !shape.empty()) fmt::print("{}\n", shape);
  j["shape_group"] = ctx.current_shape_group() ? nlohmann::json(*ctx.current_shape_group()) : nlohmann::json(nullptr);
  j["loops"] = o.loops;
  j["warmup"] = o.warmup;
  j["threads"] = o.threads;
  const auto inputs = inputs_or_pattern(ctx, o.inputs);

  ProgressBar bar;
  const std::size_t per_phase = o.warmup + o.loops;
  const std::size_t phases = 1 + (o.zero_copy ? 1 : 0) + (o.threads > 1 ? 1 : 0);
  std::size_t done = 0;
  const auto tick = [&](std::string_view label) { bar.update(label, ++done, per_phase * phases); };

  // 1. The general API, phase by phase.
  Phases general;
  general.reserve(o.loops);
  for (std::size_t i = 0; i < per_phase; ++i) {
    general_iteration(ctx, inputs, i < o.warmup ? nullptr : &general);
    tick("general API");
  }
  j["general"] = phases_json(general, "inputs_set", "outputs_get");

  // 2. Zero-copy: inputs and outputs bound to runtime memory once (native output layout); per
  //    inference the input bytes are copied in (with the cache sync) and the outputs synced back.
  if (o.zero_copy) {
    IoBinding io(ctx, BindAs::model(), BindAs::native_layout());
    std::vector<std::vector<std::byte>> sources;
    for (std::uint32_t i = 0; i < ctx.num_inputs(); ++i) {
      const auto& mem = io.input_memory(i);
      std::vector<std::byte> src(mem.size());
      const auto& file = inputs[i].bytes;
      for (std::size_t b = 0; b < src.size(); ++b) src[b] = file.empty() ? std::byte{0} : file[b % file.size()];
      sources.push_back(std::move(src));
    }
    Phases zc;
    zc.reserve(o.loops);
    volatile std::uint8_t sink = 0;
    for (std::size_t it = 0; it < per_phase; ++it) {
      const auto t0 = Clock::now();
      for (std::uint32_t i = 0; i < ctx.num_inputs(); ++i) {
        auto w = io.input_memory(i).write();
        std::memcpy(w.data(), sources[i].data(), std::min(sources[i].size(), w.size()));
      }
      const auto t1 = Clock::now();
      io.run();
      const auto t2 = Clock::now();
      for (std::uint32_t i = 0; i < ctx.num_outputs(); ++i) {
        const auto r = io.output_memory(i).read();
        sink = static_cast<std::uint8_t>(sink + static_cast<std::uint8_t>(r.data()[0]));
      }
      const auto t3 = Clock::now();
      if (it >= o.warmup) {
        zc.set.push_back(ms(t0, t1));
        zc.run.push_back(ms(t1, t2));
        zc.get.push_back(ms(t2, t3));
        zc.total.push_back(ms(t0, t3));
      }
      tick("zero-copy");
    }
    j["zero_copy"] = phases_json(zc, "copy_in_sync", "sync_out");
  } else {
    j["zero_copy"] = nullptr;
  }

  // 3. A pool: one context per thread (rknn_dup_context), each running the general API.
  if (o.threads > 1) {
    std::vector<Context> pool;
    for (std::size_t t = 0; t < o.threads; ++t) {
      // rknn_dup_context shares the weights, but refuses dynamic-shape models (on the board too):
      // those get a context of their own each.
      Context c = ctx.is_dynamic() ? open_model(o.model) : ctx.dup();
      if (ctx.current_shape_group()) c.set_input_shapes(*ctx.current_shape_group());
      if (!o.core_mask.empty()) c.set_core_mask(parse_core_mask(o.core_mask));
      c.release_thread();
      pool.push_back(std::move(c));
    }
    std::vector<Phases> per_thread(o.threads);
    std::atomic<std::size_t> finished{0};
    std::vector<std::exception_ptr> errors(o.threads);
    const auto t0 = Clock::now();
    {
      std::vector<std::jthread> workers;
      for (std::size_t t = 0; t < o.threads; ++t)
        workers.emplace_back([&, t] {
          try {
            for (std::size_t i = 0; i < per_phase; ++i) {
              general_iteration(pool[t], inputs, i < o.warmup ? nullptr : &per_thread[t]);
              ++finished;
            }
          } catch (...) {
            errors[t] = std::current_exception();
          }
          pool[t].release_thread();
        });
      while (finished.load() < o.threads * per_phase) {
        bool failed = false;
        for (const auto& e : errors) failed = failed || e;
        if (failed) break;
        bar.update("threads", done + finished.load() / o.threads, per_phase * phases);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    const double wall = ms(t0, Clock::now());
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
    Phases all;
    for (const auto& p : per_thread) {
      all.set.insert(all.set.end(), p.set.begin(), p.set.end());
      all.run.insert(all.run.end(), p.run.begin(), p.run.end());
      all.get.insert(all.get.end(), p.get.begin(), p.get.end());
      all.total.insert(all.total.end(), p.total.begin(), p.total.end());
    }
    auto pj = phases_json(all, "inputs_set", "outputs_get");
    // Throughput of the pool: every inference (warm-up included) over the wall time.
    pj["throughput_per_s"] = wall > 0 ? 1000.0 * static_cast<double>(o.threads * per_phase) / wall : 0.0;
    j["parallel"] = pj;
  } else {
    j["parallel"] = nullptr;
  }
  bar.finish();

  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("{} loops after {} warm-up{}\n", o.loops, o.warmup, o.warmup == 1 ? "" : "s");
  print_phases("general API (rknn_inputs_set, rknn_run, rknn_outputs_get + release):", j["general"], "inputs_set",
               "outputs_get");
  if (!j["zero_copy"].is_null())
    print_phases("zero-copy (copy into bound memory + sync, rknn_run, output sync):", j["zero_copy"], "copy_in_sync",
                 "sync_out");
  if (!j["parallel"].is_null())
    print_phases(fmt::format("{} contexts in {} threads (general API):", o.threads, o.threads), j["parallel"],
                 "inputs_set", "outputs_get", "all inferences / wall time");
  return 0;
}

}  // namespace rknnxx::tool
