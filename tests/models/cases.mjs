// The reference cases: which model, which input shapes, and the deterministic input of each.
// Shared by reference.mjs (which writes the references) and benchmarks/ort_bench.mjs.
// Model paths are relative to the models folder (RKNNXX_MODELS, default <repo>/build/models).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

// The models folder: an explicit argument, else $RKNNXX_MODELS, else <repo>/build/models.
export function modelsDir(explicit) {
  return path.resolve(explicit || process.env.RKNNXX_MODELS || path.join(here, '..', '..', 'build', 'models'));
}

// mulberry32: a small, well-mixed 32-bit generator; the same seed gives the same input on every machine.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function seedOf(text) { // FNV-1a of the case and input name
  let h = 0x811c9dc5;
  for (const c of Buffer.from(text)) h = Math.imul(h ^ c, 0x01000193) >>> 0;
  return h;
}

// Uniform in [-1, 1): the dynamic test models' inputs.
function uniform(shape, seed) {
  const random = generator(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  return Float32Array.from({ length: n }, () => random() * 2 - 1);
}

// A noise image of whole 8-bit pixel values, normalised like ImageNet inputs: (p / 255 - mean) / std.
function imagenet(shape, seed) {
  const random = generator(seed);
  const [, c, h, w] = shape;
  const mean = [0.485, 0.456, 0.406], std = [0.229, 0.224, 0.225];
  const out = new Float32Array(c * h * w);
  for (let ch = 0; ch < c; ++ch)
    for (let i = 0; i < h * w; ++i) out[ch * h * w + i] = (Math.floor(random() * 256) / 255 - mean[ch % 3]) / std[ch % 3];
  return out;
}

// A synthetic page: light, slightly uneven paper with lines of dark seven-segment digits, as whole
// 8-bit pixel values. PaddleOCR reads such digits (the recogniser decodes them), so its outputs
// carry real content: the detector's map has text regions, the recogniser's softmax has digits in
// it, and an engine bug that changes a prediction changes the decoded text. Returns the gray image
// and the text drawn (lines joined by '\n'; ' ' where a word gap was left).
const SEGMENTS = ['abcdef', 'bc', 'abdeg', 'abcdg', 'bcfg', 'acdfg', 'acdefg', 'abc', 'abcdefg', 'abcdfg'];

function drawDigit(gray, w, h, digit, x0, y0, height, ink) {
  const width = Math.round(height * 0.55), thick = Math.max(2, Math.round(height * 0.12)), half = Math.round(height / 2);
  const rect = (x, y, rw, rh) => {
    for (let yy = Math.max(0, y); yy < Math.min(h, y + rh); ++yy)
      for (let xx = Math.max(0, x); xx < Math.min(w, x + rw); ++xx) gray[yy * w + xx] = ink;
  };
  const parts = {
    a: [x0, y0, width, thick], g: [x0, y0 + Math.round((height - thick) / 2), width, thick], d: [x0, y0 + height - thick, width, thick],
    f: [x0, y0, thick, half], b: [x0 + width - thick, y0, thick, half],
    e: [x0, y0 + half, thick, height - half], c: [x0 + width - thick, y0 + half, thick, height - half],
  };
  for (const s of SEGMENTS[digit]) rect(...parts[s]);
  return width;
}

function page(h, w, seed, lines) {
  const random = generator(seed);
  const gray = new Float32Array(h * w);
  for (let y = 0; y < h; ++y)
    for (let x = 0; x < w; ++x) gray[y * w + x] = 215 + 25 * (x / w) - 10 * (y / h) + Math.floor(random() * 12);
  const text = [];
  for (const line of lines) {
    let drawn = '';
    const advance = () => Math.round(line.height * (0.85 + 0.1 * random()));
    for (let x = line.x; x + line.height * 0.55 <= line.x + line.width; x += advance()) {
      if (drawn !== '' && !drawn.endsWith(' ') && random() < 0.12) {
        drawn += ' '; // a gap between words
        continue;
      }
      const digit = Math.floor(random() * 10);
      drawDigit(gray, w, h, digit, x, line.y, line.height, 20 + Math.floor(random() * 40));
      drawn += digit;
    }
    text.push(drawn.trimEnd());
  }
  return { gray, text: text.join('\n') };
}

function normalisedPage(shape, gray, mean, std) {
  const [, c, h, w] = shape;
  const out = new Float32Array(c * h * w);
  for (let ch = 0; ch < c; ++ch)
    for (let i = 0; i < h * w; ++i) {
      const pixel = Math.min(255, Math.max(0, Math.round(gray[i] + 3 * ch)));
      out[ch * h * w + i] = (pixel / 255 - mean[ch % 3]) / std[ch % 3];
    }
  return out;
}

// PaddleOCR's detector normalises like ImageNet; recogniser and direction classifier map to [-1, 1].
function ocrPage(shape, seed) {
  const [, , h, w] = shape;
  const random = generator(seed ^ 0x5eed);
  const lines = [];
  for (let y = 24; y + 40 < h; y += 56 + Math.floor(random() * 40))
    lines.push({ x: 16 + Math.floor(random() * 60), y, width: w * (0.4 + 0.5 * random()) - 40, height: 18 + Math.floor(random() * 16) });
  const { gray, text } = page(h, w, seed, lines);
  return { data: normalisedPage(shape, gray, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]), text };
}

function ocrLine(shape, seed) {
  const [, , h, w] = shape;
  const lines = [{ x: 8, y: Math.round(h * 0.2), width: w - 16, height: Math.round(h * 0.6) }];
  const { gray, text } = page(h, w, seed, lines);
  return { data: normalisedPage(shape, gray, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]), text };
}

const FILLS = { uniform, imagenet, ocrPage, ocrLine };

const vision = (name) => ({ name, model: `vision/${name}.onnx`, inputs: { input: { shape: [1, 3, 224, 224], fill: 'imagenet' } } });
const dyncnn = (h, w) => ({ name: `dyncnn_${h}x${w}`, model: 'dyn/dyncnn.onnx', inputs: { data: { shape: [1, 3, h, w], fill: 'imagenet' } } });
const twoInputs = (l1, l2) => ({
  name: `two_inputs_${l1}_${l2}`, model: 'dyn/two_inputs.onnx',
  inputs: { a: { shape: [1, l1], fill: 'uniform' }, b: { shape: [1, l2], fill: 'uniform' } },
});

export const CASES = [
  vision('resnet18'), vision('mobilenet_v2'), vision('mobilenet_v3_small'), vision('squeezenet1_1'),
  { name: 'ocr_det', model: 'ocr/det.onnx', inputs: { x: { shape: [1, 3, 640, 640], fill: 'ocrPage' } } },
  { name: 'ocr_rec', model: 'ocr/rec.onnx', inputs: { x: { shape: [1, 3, 48, 320], fill: 'ocrLine' } }, decode: 'ctc' },
  { name: 'ocr_cls', model: 'ocr/cls.onnx', inputs: { x: { shape: [1, 3, 48, 192], fill: 'ocrLine' } } },
  // The shape set of docs/c-interface.md's dynamic-shape example (the first is the MaxShape), plus an odd,
  // non-square shape that catches swapped H/W and wrong rounding of the strided convolutions.
  dyncnn(224, 224), dyncnn(192, 192), dyncnn(160, 160), dyncnn(99, 130),
  // The two-input shape set of docs/c-interface.md#dynamic-shapes: a [1,224] with b [1,40], a [1,112] with b [1,80].
  twoInputs(224, 40), twoInputs(112, 80),
];

// The real networks of the operator-coverage tests (export_networks.py): listed apart, in
// ref/networks.json, since each is converted and run through the C interface by networks_test.py
// rather than in the two engine modes of every case of ref/index.json.
const network = (name, inputs, extra = {}) => ({ name, model: `nets/${name}.onnx`, inputs, ...extra });
// A QDQ graph rounds every activation to its uint8 grid: where a float32 sum in another order lands
// on the other side of a half step, the value moves by a whole step, and the steps add up over the
// 50 pairs. Measured on resnet18_qdq: torch's own evaluation of the same graph is 1.85e-2 (mean
// 3.6e-3) from ONNX Runtime, the float model without the pairs 4.7e-2 (mean 1.1e-2). So the worst
// element gets 3e-2, and the mean, 5e-3, is what tells a quantized run from a float one.
const QDQ_TOLERANCE = { max: 3e-2, mean: 5e-3 };
export const NETWORK_CASES = [
  network('recurrent', { x: { shape: [2, 24, 16], fill: 'uniform' } }),
  network('lraspp', { image: { shape: [1, 3, 224, 288], fill: 'imagenet' } }),
  network('resnet18_qdq', { input: { shape: [1, 3, 224, 224], fill: 'imagenet' } }, { tolerance: QDQ_TOLERANCE }),
  network('swin_t', { input: { shape: [1, 3, 224, 224], fill: 'imagenet' } }),
  // Detection with its post-processing in the graph: the number of boxes is decided while running.
  network('ssdlite', { image: { shape: [1, 3, 320, 320], fill: 'imagenet' } }, { detection: true }),
];

export function findCase(name) {
  const all = [...CASES, ...NETWORK_CASES];
  const c = all.find((x) => x.name === name);
  if (!c) throw new Error(`unknown case '${name}'; known: ${all.map((x) => x.name).join(', ')}`);
  return c;
}

// The deterministic input of one input of one case: { data: Float32Array, text?: the digits drawn }.
export function makeInput(caseName, inputName, spec) {
  const made = FILLS[spec.fill](spec.shape, seedOf(`${caseName}/${inputName}`));
  return made instanceof Float32Array ? { data: made } : made;
}
