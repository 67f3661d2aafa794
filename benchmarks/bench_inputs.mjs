#!/usr/bin/env node
// The inputs and the conversion config for timing one ONNX model on every runtime of compare.sh.
//
//   node benchmarks/bench_inputs.mjs --model FILE.onnx --out DIR [--input NAME=FILE.npy ...] [--models DIR]
//
// Every graph input gets a file: the one given with --input, or DIR/<index>.npy with seeded
// uniform [0, 1) values of the input's declared shape and type (an input whose shape has symbolic
// dimensions must be given: no shape can be guessed for it). Writes DIR/config.json for
// `rknnxx convert` (rk3588, float; dynamic_input set to the inputs' shapes when the model declares
// symbolic dimensions, since the host plans every shape at conversion) and prints one JSON line:
// {"inputs": [{"name", "file", "shape"}] in the model's order, "config": FILE, "dynamic": bool}.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { modelsDir } = await import(path.join(here, '..', 'tests', 'models', 'cases.mjs'));
const { readNpy, writeNpy } = await import(path.join(here, '..', 'tests', 'models', 'npy.mjs'));
const { loadOrt } = await import(path.join(here, '..', 'tests', 'models', 'reference.mjs'));

function fail(problem) {
  console.error(`bench_inputs.mjs: error: ${problem}`);
  process.exit(2);
}

const options = { inputs: {} };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; ++i) {
  const value = () => (i + 1 < args.length ? args[++i] : fail(`${args[i]} needs a value`));
  switch (args[i]) {
    case '--model': options.model = value(); break;
    case '--out': options.out = value(); break;
    case '--models': options.models = value(); break;
    case '--input': {
      const spec = value();
      const eq = spec.indexOf('=');
      if (eq <= 0) fail(`--input needs NAME=FILE.npy, got '${spec}'`);
      options.inputs[spec.slice(0, eq)] = path.resolve(spec.slice(eq + 1));
      break;
    }
    default: fail(`unknown argument '${args[i]}'`);
  }
}
if (!options.model || !options.out) fail('give --model FILE.onnx and --out DIR');

let ort;
try {
  ort = loadOrt(modelsDir(options.models));
} catch (e) {
  fail(e.message);
}
let session;
try {
  session = await ort.InferenceSession.create(path.resolve(options.model));
} catch (e) {
  fail(`ONNX Runtime cannot load ${options.model}: ${e.message.split('\n')[0]}`);
}
for (const name of Object.keys(options.inputs))
  if (!session.inputNames.includes(name)) fail(`--input ${name}: the model has no such input (${session.inputNames.join(', ')})`);

// A small linear congruential generator: the same inputs on every run and every machine.
let state = 20261202;
const uniform = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 4294967296);
const arrays = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
  uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
};

fs.mkdirSync(options.out, { recursive: true });
let dynamic = false;
const inputs = session.inputMetadata.map((meta, index) => {
  const symbolic = !meta.isTensor || meta.shape.some((d) => typeof d !== 'number' || d < 0);
  dynamic ||= symbolic;
  let file = options.inputs[meta.name];
  if (!file) {
    if (symbolic) fail(`input '${meta.name}' has the shape [${meta.shape}]: give it a file with --input ${meta.name}=FILE.npy`);
    const Typed = arrays[meta.type];
    if (!Typed) fail(`input '${meta.name}' is ${meta.type}: give it a file with --input ${meta.name}=FILE.npy`);
    const n = meta.shape.reduce((a, b) => a * b, 1);
    const data = Typed.from({ length: n }, () => (meta.type.startsWith('float') ? uniform() : Math.floor(uniform() * 8)));
    file = path.join(options.out, `${index}.npy`);
    writeNpy(file, meta.type, meta.shape, data);
  }
  return { name: meta.name, file, shape: readNpy(file).shape };
});
await session.release();

const config = { target_platform: 'rk3588' };
if (dynamic) config.dynamic_input = [inputs.map((i) => i.shape)];
const configFile = path.join(options.out, 'config.json');
fs.writeFileSync(configFile, JSON.stringify(config) + '\n');
console.log(JSON.stringify({ inputs, config: configFile, dynamic }));
