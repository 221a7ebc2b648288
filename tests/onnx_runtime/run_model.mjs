// Runs an ONNX model in ONNX Runtime (onnxruntime-node) and prints its
// outputs as JSON: {"name": {"dims": [...], "data": [...]}, ...}.
//
//   node run_model.mjs MODEL.onnx INPUT [INPUT...] [--expect EXPECTED.npy --tol 1e-4]
//
// Each INPUT is an .npy file (f32, f64, i32, i64 or bool, little-endian, C
// order) or a .json file {"dims": [...], "data": [...], "type": "float32"},
// fed to the model's inputs in order. With --expect, the first output is
// compared with the .npy file: the largest absolute difference is printed
// on stderr and the exit code is 1 when it is above the tolerance.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');

const NPY_TYPES = {
  '<f4': ['float32', Float32Array],
  '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array],
  '<i8': ['int64', BigInt64Array],
  '|b1': ['bool', Uint8Array],
};

function readNpy(path) {
  const buf = readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not an .npy file`);
  const major = buf[6];
  const headerLen = major >= 2 ? buf.readUInt32LE(8) : buf.readUInt16LE(8);
  const start = (major >= 2 ? 12 : 10) + headerLen;
  const header = buf.toString('latin1', major >= 2 ? 12 : 10, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order`);
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const kind = NPY_TYPES[descr];
  if (!kind) throw new Error(`${path}: dtype ${descr} is not read here`);
  const [type, Array_] = kind;
  const bytes = buf.subarray(start);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const data = new Array_(copy.buffer, 0, bytes.length / Array_.BYTES_PER_ELEMENT);
  return new ort.Tensor(type, type === 'bool' ? Uint8Array.from(data) : data, dims);
}

function readJson(path) {
  const v = JSON.parse(readFileSync(path, 'utf8'));
  const type = v.type ?? 'float32';
  const make = { float32: Float32Array, float64: Float64Array, int32: Int32Array }[type];
  const data = type === 'int64' ? BigInt64Array.from(v.data.map(BigInt)) : make.from(v.data);
  return new ort.Tensor(type, data, v.dims);
}

const args = process.argv.slice(2);
let expect = null;
let tol = 1e-4;
const files = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--expect') expect = args[++i];
  else if (args[i] === '--tol') tol = Number(args[++i]);
  else files.push(args[i]);
}
if (files.length < 1) {
  console.error('usage: node run_model.mjs MODEL.onnx INPUT... [--expect EXPECTED.npy --tol 1e-4]');
  process.exit(2);
}
const [model, ...inputs] = files;
const session = await ort.InferenceSession.create(model);
const feeds = {};
session.inputNames.forEach((name, i) => {
  if (i >= inputs.length) throw new Error(`${model}: no file for input ${name}`);
  feeds[name] = inputs[i].endsWith('.json') ? readJson(inputs[i]) : readNpy(inputs[i]);
});
const results = await session.run(feeds);
const printed = {};
for (const name of session.outputNames) {
  const t = results[name];
  printed[name] = { dims: t.dims, data: Array.from(t.data, (x) => (typeof x === 'bigint' ? Number(x) : x)) };
}
console.log(JSON.stringify(printed));

if (expect) {
  const want = readNpy(expect);
  const got = results[session.outputNames[0]];
  if (want.dims.join(',') !== got.dims.join(',')) {
    console.error(`${model}: output dims [${got.dims}] differ from the expected [${want.dims}]`);
    process.exit(1);
  }
  let worst = 0;
  for (let i = 0; i < want.data.length; ++i) {
    const d = Math.abs(Number(got.data[i]) - Number(want.data[i]));
    worst = Number.isNaN(d) ? Infinity : Math.max(worst, d);
  }
  console.error(`${model}: max abs difference ${worst} (tolerance ${tol})`);
  if (!(worst <= tol)) process.exit(1);
}
