// bench_onnx's peer: onnxruntime for Node (tests/onnx_runtime/node_modules)
// times a model's inference on a batch of uniform [0, 1) inputs.
// Usage: node onnxruntime_peer.mjs MODEL.onnx BATCH RUNS THREADS
// Prints the median milliseconds of RUNS runs (after 5 untimed ones).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../tests/onnx_runtime/package.json'));
const ort = require('onnxruntime-node');

const [model, batch, runs, threads] = process.argv.slice(2);
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: Number(threads), interOpNumThreads: 1, graphOptimizationLevel: 'all',
});
const input = session.inputNames[0];
const shape = model.endsWith('cnn.onnx') ? [Number(batch), 1, 8, 8] : [Number(batch), 64];
const data = new Float32Array(shape.reduce((a, b) => a * b, 1)).map(() => Math.random());
const feeds = { [input]: new ort.Tensor('float32', data, shape) };
for (let i = 0; i < 5; ++i) await session.run(feeds);
const ms = [];
for (let i = 0; i < Number(runs); ++i) {
  const t0 = process.hrtime.bigint();
  await session.run(feeds);
  ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
ms.sort((a, b) => a - b);
const n = ms.length;
console.log(n % 2 ? ms[(n - 1) / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2);
