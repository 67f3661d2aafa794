#!/usr/bin/python3
"""CPU time per run of a w8a8 model against its float16 conversion and the float32 engine, 1 thread, in one command.

  int8_cpu.py --build DIR --models DIR [--rounds R] [--runs N] CASE=FLOAT16.hrknn,W8A8.hrknn ...

For each CASE (a reference case of tests/models for the float32 engine, e.g. mobilenet_v2) times, in R
interleaved rounds: the float16 model and the w8a8 model with `rknnxx bench` (RKNNXX_HOST_THREADS=1,
--no-zero-copy), the w8a8 model again with RKNNXX_ENGINE_INT8=off (the float kernels plus rounding, what the
host runtime did before its integer Conv), and `engine_bench --case CASE --threads 1` (float32, its
median_thread_cpu_ms). A bench's CPU time per run is the difference of the CPU time of two whole processes,
one with N + 2 runs and one with 2, divided by N: loading and planning cancel, and other processes on a busy
machine inflate CPU time much less than the wall clock. Prints the medians over the rounds, the ratios to
float16 and the load average (benchmarks/README.md, "int8 Conv on integers").
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench_cpu_ms(rknnxx, model, runs, env):
    def once(n):
        before = child_cpu()
        subprocess.run([rknnxx, "bench", model, "-n", str(n), "--warmup", "1", "--no-zero-copy", "--json"],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return child_cpu() - before
    return (once(runs + 1) - once(1)) * 1000.0 / runs


def engine_cpu_ms(engine_bench, case, models, runs):
    out = subprocess.run([engine_bench, "--case", case, "--threads", "1", "--warmup", "2", "--runs", str(runs),
                          "--models", models], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["median_thread_cpu_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    rknnxx = os.path.join(a.build, "tools", "rknnxx")
    engine_bench = os.path.join(a.build, "benchmarks", "engine_bench")
    env = dict(os.environ, RKNNXX_HOST_THREADS="1")
    off = dict(env, RKNNXX_ENGINE_INT8="off")
    load = [os.getloadavg()[0]]
    rows = []
    for spec in a.cases:
        case, models = spec.split("=", 1)
        float16, w8a8 = models.split(",")
        times = {"f32 engine": [], "f16": [], "w8a8 before": [], "w8a8": []}
        for _ in range(a.rounds):
            times["f32 engine"].append(engine_cpu_ms(engine_bench, case, a.models, a.runs))
            times["f16"].append(bench_cpu_ms(rknnxx, float16, a.runs, env))
            times["w8a8 before"].append(bench_cpu_ms(rknnxx, w8a8, a.runs, off))
            times["w8a8"].append(bench_cpu_ms(rknnxx, w8a8, a.runs, env))
            load.append(os.getloadavg()[0])
        rows.append((case, {k: statistics.median(v) for k, v in times.items()}))
    print(f"{'case':14s} {'f32 engine':>11s} {'f16':>9s} {'w8a8 before':>12s} {'w8a8':>9s}"
          f" {'f32/f16':>8s} {'before/f16':>11s} {'w8a8/f16':>9s} {'w8a8/before':>12s}")
    for case, t in rows:
        print(f"{case:14s} {t['f32 engine']:11.1f} {t['f16']:9.1f} {t['w8a8 before']:12.1f} {t['w8a8']:9.1f}"
              f" {t['f32 engine'] / t['f16']:8.2f} {t['w8a8 before'] / t['f16']:11.2f}"
              f" {t['w8a8'] / t['f16']:9.2f} {t['w8a8'] / t['w8a8 before']:12.2f}")
    print(f"CPU ms per run (1 thread), medians of {a.rounds} rounds; load average {min(load):.1f} to {max(load):.1f}")


if __name__ == "__main__":
    sys.exit(main())
