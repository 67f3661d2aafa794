#!/usr/bin/env node
// ONNX Runtime reference outputs for every case of cases.mjs.
//
//   node tests/models/reference.mjs [CACHE_DIR] [--case NAME ...]
//
// CACHE_DIR defaults to $RKNNXX_MODELS, else <repo>/build/models; fetch.sh must have filled it.
// For each case it writes CACHE_DIR/ref/<case>/ with input_<i>.npy and output_<i>.npy (float32,
// little-endian, C order; i in the order of the model's inputs and outputs) and manifest.json,
// and lists the cases in CACHE_DIR/ref/index.json, the real networks of cases.mjs's NETWORK_CASES
// in CACHE_DIR/ref/networks.json.
//
// ONNX Runtime runs on one thread, sequentially, with graph optimisations disabled, so that the
// reference is each operator's plain semantics (no fusions reordering float arithmetic) and is
// the same on every run. Comparison rule for the engine (also written in each manifest):
//   relative error = max_i |engine_i - reference_i| / max_i |reference_i|  <= 1e-4, per output.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { CASES, NETWORK_CASES, findCase, makeInput, modelsDir } from './cases.mjs';
import { writeNpy } from './npy.mjs';

export const TOLERANCE = { metric: 'max(|a - ref|) / max(|ref|)', max: 1e-4 };

export function loadOrt(cache) {
  const require = createRequire(path.join(cache, 'npm', 'package.json'));
  try {
    return require('onnxruntime-node');
  } catch (e) {
    throw new Error(`onnxruntime-node is not installed in ${path.join(cache, 'npm')}: run tests/models/fetch.sh first (${e.message})`);
  }
}

function stats(data) {
  let maxAbs = 0, sum = 0, finite = true;
  for (const v of data) {
    if (!Number.isFinite(v)) finite = false;
    maxAbs = Math.max(maxAbs, Math.abs(v));
    sum += v;
  }
  return { finite, max_abs: maxAbs, mean: sum / data.length };
}

// PaddleOCR's greedy CTC decoding of the recogniser's [1, T, classes] output: the best class per
// step, repeats merged, blanks (class 0) dropped; class k is line k of dict.txt, the last class a space.
function ctcGreedy(tensor, cache) {
  const dict = fs.readFileSync(path.join(cache, 'ocr', 'dict.txt'), 'utf8').split('\n');
  const [, steps, classes] = tensor.dims.map(Number);
  let text = '', previous = 0;
  for (let t = 0; t < steps; ++t) {
    let best = 0;
    for (let k = 1; k < classes; ++k) if (tensor.data[t * classes + k] > tensor.data[t * classes + best]) best = k;
    if (best !== 0 && best !== previous) text += best <= dict.length ? dict[best - 1] : ' ';
    previous = best;
  }
  return text;
}

async function runCase(ort, cache, c) {
  const modelPath = path.join(cache, c.model);
  if (!fs.existsSync(modelPath)) throw new Error(`${c.name}: model ${modelPath} is missing: run tests/models/fetch.sh first`);
  const session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'disabled',
  });
  const declared = Object.keys(c.inputs);
  if (session.inputNames.join() !== declared.join())
    throw new Error(`${c.name}: model inputs are [${session.inputNames}], the case declares [${declared}]`);
  const feeds = {}, inputs = [];
  session.inputNames.forEach((name, i) => {
    const spec = c.inputs[name];
    const made = makeInput(c.name, name, spec);
    feeds[name] = new ort.Tensor('float32', made.data, spec.shape);
    inputs.push({ name, file: `input_${i}.npy`, dtype: 'float32', shape: spec.shape, ...(made.text !== undefined && { drawn_text: made.text }) });
  });
  const t0 = performance.now();
  const results = await session.run(feeds);
  const ms = performance.now() - t0;

  const finalDir = path.join(cache, 'ref', c.name);
  const tmpDir = `${finalDir}.tmp`;
  fs.rmSync(tmpDir, { recursive: true, force: true });
  fs.mkdirSync(tmpDir, { recursive: true });
  session.inputNames.forEach((name, i) => writeNpy(path.join(tmpDir, inputs[i].file), 'float32', inputs[i].shape, feeds[name].data));
  const outputs = session.outputNames.map((name, i) => {
    const t = results[name];
    writeNpy(path.join(tmpDir, `output_${i}.npy`), t.type, t.dims, t.data);
    const s = t.type === 'float32' ? stats(t.data) : {};
    if (s.finite === false) throw new Error(`${c.name}: output '${name}' has non-finite values`);
    return { name, file: `output_${i}.npy`, dtype: t.type, shape: t.dims.map(Number), ...s };
  });
  await session.release();
  if (c.decode === 'ctc') outputs[0].decoded_text = ctcGreedy(results[session.outputNames[0]], cache);
  const manifest = {
    case: c.name, model: c.model, inputs, outputs,
    reference: { runtime: 'onnxruntime-node', version: ort.env.versions.node, intra_op_threads: 1,
                 execution_mode: 'sequential', graph_optimization_level: 'disabled' },
    tolerance: { ...TOLERANCE, ...c.tolerance },
    ...(c.detection && { detection: true }),  // outputs boxes, scores, labels: compared as a set (networks_test.py)
  };
  fs.writeFileSync(path.join(tmpDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.rmSync(finalDir, { recursive: true, force: true });
  fs.renameSync(tmpDir, finalDir);
  const shapes = (list) => list.map((x) => `${x.name}[${x.shape}]`).join(' ');
  console.log(`  ${c.name}: ${shapes(inputs)} -> ${shapes(outputs)} (${ms.toFixed(0)} ms)`);
}

async function main() {
  const args = process.argv.slice(2);
  let cacheArg, selected = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--case') selected.push(findCase(args[++i]));
    else if (args[i].startsWith('-')) throw new Error(`unknown option ${args[i]}; usage: reference.mjs [CACHE_DIR] [--case NAME ...]`);
    else cacheArg = args[i];
  }
  const cache = modelsDir(cacheArg);
  const ort = loadOrt(cache);
  if (selected.length === 0) selected = [...CASES, ...NETWORK_CASES];
  console.log(`reference.mjs: ONNX Runtime ${ort.env.versions.node} references into ${path.join(cache, 'ref')}`);
  for (const c of selected) await runCase(ort, cache, c);
  writeIndex(cache, 'index.json', CASES);
  writeIndex(cache, 'networks.json', NETWORK_CASES);
}

// Lists the cases of `cases` whose references exist; the file is left alone when that list is
// what it holds already (tests of other builds may be reading it).
function writeIndex(cache, file, cases) {
  const index = cases.filter((c) => fs.existsSync(path.join(cache, 'ref', c.name, 'manifest.json')))
    .map((c) => ({ case: c.name, model: c.model, dir: `ref/${c.name}` }));
  const text = `${JSON.stringify(index, null, 2)}\n`;
  const target = path.join(cache, 'ref', file);
  if (fs.existsSync(target) && fs.readFileSync(target, 'utf8') === text) return;
  fs.writeFileSync(`${target}.tmp`, text);
  fs.renameSync(`${target}.tmp`, target);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  main().catch((e) => {
    console.error(`reference.mjs: error: ${e.message}`);
    process.exit(1);
  });
}
