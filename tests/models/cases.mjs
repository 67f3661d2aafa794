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

// A synthetic page: light, slightly uneven paper with dark "glyphs" (a few random strokes per
// character cell) set in lines of text, as whole 8-bit pixel values in three slightly different
// channels. It gives the OCR models input with the statistics of text, so their outputs are not
// flat: the detector's probability map has text regions, the recogniser's softmax has peaks.
function page(h, w, seed, lines) {
  const random = generator(seed);
  const gray = new Float32Array(h * w);
  for (let y = 0; y < h; ++y)
    for (let x = 0; x < w; ++x) gray[y * w + x] = 215 + 25 * (x / w) - 10 * (y / h) + Math.floor(random() * 12);
  for (const line of lines) {
    const cell = line.height;
    for (let x0 = line.x; x0 + cell * 0.8 <= line.x + line.width; x0 += Math.round(cell * (0.7 + 0.4 * random()))) {
      if (random() < 0.12) continue; // a space between words
      const strokes = 2 + Math.floor(random() * 3);
      for (let s = 0; s < strokes; ++s) {
        const horizontal = random() < 0.5;
        const thick = Math.max(1, Math.round(cell * 0.1));
        const len = Math.round(cell * (0.4 + 0.5 * random()));
        const sx = x0 + Math.floor(random() * (cell * 0.8 - (horizontal ? len : thick)));
        const sy = line.y + Math.floor(random() * (cell - (horizontal ? thick : len)));
        const ink = 20 + Math.floor(random() * 40);
        for (let y = sy; y < sy + (horizontal ? thick : len); ++y)
          for (let x = sx; x < sx + (horizontal ? len : thick); ++x)
            if (y >= 0 && y < h && x >= 0 && x < w) gray[y * w + x] = ink;
      }
    }
  }
  return gray;
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
  return normalisedPage(shape, page(h, w, seed, lines), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]);
}

function ocrLine(shape, seed) {
  const [, , h, w] = shape;
  const lines = [{ x: 6, y: Math.round(h * 0.15), width: w - 12, height: Math.round(h * 0.7) }];
  return normalisedPage(shape, page(h, w, seed, lines), [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]);
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
  { name: 'ocr_rec', model: 'ocr/rec.onnx', inputs: { x: { shape: [1, 3, 48, 320], fill: 'ocrLine' } } },
  { name: 'ocr_cls', model: 'ocr/cls.onnx', inputs: { x: { shape: [1, 3, 48, 192], fill: 'ocrLine' } } },
  // The shape set of the seed's dynamic-shape example (the first is the MaxShape), plus an odd,
  // non-square shape that catches swapped H/W and wrong rounding of the strided convolutions.
  dyncnn(224, 224), dyncnn(192, 192), dyncnn(160, 160), dyncnn(99, 130),
  // The seed's two-input shape set: a [1,224] with b [1,40], a [1,112] with b [1,80].
  twoInputs(224, 40), twoInputs(112, 80),
];

export function findCase(name) {
  const c = CASES.find((x) => x.name === name);
  if (!c) throw new Error(`unknown case '${name}'; known: ${CASES.map((x) => x.name).join(', ')}`);
  return c;
}

// The deterministic input tensor of one input of one case.
export function makeInput(caseName, inputName, spec) {
  return FILLS[spec.fill](spec.shape, seedOf(`${caseName}/${inputName}`));
}
