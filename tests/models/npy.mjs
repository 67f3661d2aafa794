// The .npy format (NumPy's format for one array), as the references and benchmarks need it:
// writes version 1.0 files exactly as numpy.save does (header padded to a multiple of 64 bytes),
// reads versions 1, 2 and 3 of the little-endian numeric types below, C order only.
import fs from 'node:fs';

// ONNX Runtime's tensor type names <-> numpy descriptors, with the typed array that holds them.
const TYPES = [
  { ort: 'float32', descr: '<f4', array: Float32Array },
  { ort: 'float64', descr: '<f8', array: Float64Array },
  { ort: 'int8', descr: '|i1', array: Int8Array },
  { ort: 'uint8', descr: '|u1', array: Uint8Array },
  { ort: 'int16', descr: '<i2', array: Int16Array },
  { ort: 'uint16', descr: '<u2', array: Uint16Array },
  { ort: 'int32', descr: '<i4', array: Int32Array },
  { ort: 'uint32', descr: '<u4', array: Uint32Array },
  { ort: 'int64', descr: '<i8', array: BigInt64Array },
  { ort: 'uint64', descr: '<u8', array: BigUint64Array },
  { ort: 'bool', descr: '|b1', array: Uint8Array },
];

export function descrOf(ortType) {
  const t = TYPES.find((x) => x.ort === ortType);
  if (!t) throw new Error(`npy: no .npy descriptor for tensor type '${ortType}'`);
  return t.descr;
}

export function encodeNpy(ortType, shape, data) {
  const descr = descrOf(ortType);
  const dims = shape.map(Number);
  const tuple = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${tuple}, }`;
  const unpadded = 10 + header.length + 1; // magic(6) version(2) length(2) ... '\n'
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const count = dims.reduce((a, b) => a * b, 1);
  if (data.length !== count) throw new Error(`npy: shape [${dims}] needs ${count} elements, data has ${data.length}`);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]);
}

export function writeNpy(file, ortType, shape, data) {
  fs.writeFileSync(file, encodeNpy(ortType, shape, data));
}

export function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const lenSize = major === 1 ? 2 : 4;
  if (![1, 2, 3].includes(major)) throw new Error(`${file}: unsupported .npy version ${major}`);
  const headerLength = lenSize === 2 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = 8 + lenSize;
  const header = buf.toString('latin1', start, start + headerLength);
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined) throw new Error(`${file}: bad header`);
  if (fortran !== 'False') throw new Error(`${file}: Fortran order is not supported`);
  const t = TYPES.find((x) => x.descr === descr);
  if (!t) throw new Error(`${file}: unsupported dtype '${descr}'`);
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const offset = start + headerLength;
  const bytes = count * t.array.BYTES_PER_ELEMENT;
  if (buf.length - offset !== bytes) throw new Error(`${file}: expected ${bytes} data bytes, found ${buf.length - offset}`);
  const copy = new Uint8Array(bytes); // aligned copy: the file's data offset need not suit the typed array
  copy.set(buf.subarray(offset, offset + bytes));
  return { type: t.ort, shape, data: new t.array(copy.buffer) };
}
