#!/usr/bin/env node
// Times ONNX Runtime (the baseline of the engine's benchmark) on one reference case.
//
//   node benchmarks/ort_bench.mjs --case NAME [--threads N] [--warmup W] [--runs R] [--models DIR]
//   node benchmarks/ort_bench.mjs --model FILE.onnx --input NAME=FILE.npy ... [same options]
//
// With --case the model and the input are those of CACHE/ref/NAME (made by tests/models/fetch.sh),
// exactly what the engine's benchmark reads. ONNX Runtime runs with intraOpNumThreads = N,
// interOpNumThreads = 1, sequential execution and all graph optimisations (its best speed). The
// session is created once; W untimed runs, then R timed runs of session.run, each timed alone.
// Prints one JSON line: {"runtime":"onnxruntime","case":...,"threads":N,"median_ms":...,...}.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { modelsDir } = await import(path.join(here, '..', 'tests', 'models', 'cases.mjs'));
const { readNpy } = await import(path.join(here, '..', 'tests', 'models', 'npy.mjs'));
const { loadOrt } = await import(path.join(here, '..', 'tests', 'models', 'reference.mjs'));

function usage(problem) {
  console.error(`ort_bench.mjs: error: ${problem}`);
  console.error('usage: ort_bench.mjs (--case NAME | --model FILE --input NAME=FILE.npy ...) [--threads N] [--warmup W] [--runs R] [--models DIR]');
  process.exit(2);
}

function positive(text, option) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < (option === '--warmup' ? 0 : 1)) usage(`${option} needs a whole number, got '${text}'`);
  return n;
}

const options = { threads: 1, warmup: 3, runs: 20, inputs: [] };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; ++i) {
  const value = () => (i + 1 < args.length ? args[++i] : usage(`${args[i]} needs a value`));
  switch (args[i]) {
    case '--case': options.case = value(); break;
    case '--model': options.model = value(); break;
    case '--input': options.inputs.push(value()); break;
    case '--models': options.models = value(); break;
    case '--threads': options.threads = positive(value(), '--threads'); break;
    case '--warmup': options.warmup = positive(value(), '--warmup'); break;
    case '--runs': options.runs = positive(value(), '--runs'); break;
    default: usage(`unknown argument '${args[i]}'`);
  }
}
if (!options.case === !options.model) usage('give either --case or --model');

const cache = modelsDir(options.models);
let modelPath;
const feedsFiles = {};
if (options.case) {
  const dir = path.join(cache, 'ref', options.case);
  const manifestPath = path.join(dir, 'manifest.json');
  if (!fs.existsSync(manifestPath)) usage(`no reference case '${options.case}' in ${path.join(cache, 'ref')}: run tests/models/fetch.sh`);
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  modelPath = path.join(cache, manifest.model);
  for (const input of manifest.inputs) feedsFiles[input.name] = path.join(dir, input.file);
} else {
  modelPath = path.resolve(options.model);
  for (const spec of options.inputs) {
    const eq = spec.indexOf('=');
    if (eq <= 0) usage(`--input needs NAME=FILE.npy, got '${spec}'`);
    feedsFiles[spec.slice(0, eq)] = spec.slice(eq + 1);
  }
}

let ort;
try {
  ort = loadOrt(cache);
} catch (e) {
  usage(e.message);
}
const session = await ort.InferenceSession.create(modelPath, {
  intraOpNumThreads: options.threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all',
});
const feeds = {};
for (const name of session.inputNames) {
  if (!feedsFiles[name]) usage(`the model's input '${name}' has no --input`);
  const array = readNpy(feedsFiles[name]);
  feeds[name] = new ort.Tensor(array.type, array.data, array.shape);
}

for (let i = 0; i < options.warmup; ++i) await session.run(feeds);
const times = [];
const cpu = [];  // the process's CPU time per run: ONNX Runtime's threads and the JavaScript around the call
for (let i = 0; i < options.runs; ++i) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await session.run(feeds);
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1000);
}
await session.release();
times.sort((a, b) => a - b);
const middle = (v) => (v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2);
const median = middle(times);
cpu.sort((a, b) => a - b);
const round = (x) => Math.round(x * 1000) / 1000;
console.log(JSON.stringify({
  runtime: 'onnxruntime', version: ort.env.versions.node, case: options.case ?? null, model: modelPath,
  threads: options.threads, warmup: options.warmup, runs: options.runs,
  median_ms: round(median), min_ms: round(times[0]), max_ms: round(times[times.length - 1]),
  median_process_cpu_ms: round(middle(cpu)),
}));
