#!/usr/bin/env node
// scripts/ort_reference.js - reference outputs from ONNX Runtime for the
// evaluator's model tests.
//
//   node scripts/ort_reference.js MODEL.onnx OUTDIR [--seed N] [--dim NAME=VALUE ...]
//
// Generates deterministic inputs for every graph input (seeded; symbolic dims
// from --dim, unnamed ones 1), runs ONNX Runtime with graph optimizations
// disabled on one thread, and writes into OUTDIR:
//   input_<i>.bin, output_<i>.bin   raw little-endian, row-major tensor bytes
//   manifest.json                   model, seed, and per tensor: name, dtype
//                                   (ONNX code and name), shape, file
//   manifest.txt                    the same, one line per tensor, for C:
//                                   "input|output <i> <name> <dtype-code> <rank> <dims...> <file>"
// Inputs: floats uniform in [-1, 1), integers in [0, 10), bools fair coins,
// from a splitmix64 generator, so any seed gives the same bytes everywhere.
// Needs `npm install --ignore-scripts` (onnxruntime-node) at the repo root.
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// ORT type name -> [ONNX dtype code, typed array]
const TYPES = {
  float32: [1, Float32Array], uint8: [2, Uint8Array], int8: [3, Int8Array],
  uint16: [4, Uint16Array], int16: [5, Int16Array], int32: [6, Int32Array],
  int64: [7, BigInt64Array], bool: [9, Uint8Array], float64: [11, Float64Array],
  uint32: [12, Uint32Array], uint64: [13, BigUint64Array],
};

function usage(msg) {
  if (msg) console.error(`ort_reference: ${msg}`);
  console.error('usage: node scripts/ort_reference.js MODEL.onnx OUTDIR [--seed N] [--dim NAME=VALUE ...]');
  process.exit(2);
}

function parseArgs(argv) {
  const a = { seed: 1n, dims: {} , pos: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--seed') a.seed = BigInt(argv[++i] ?? usage('--seed needs a value'));
    else if (argv[i] === '--dim') {
      const m = /^([^=]+)=(\d+)$/.exec(argv[++i] ?? '');
      if (!m) usage('--dim wants NAME=VALUE');
      a.dims[m[1]] = Number(m[2]);
    } else a.pos.push(argv[i]);
  }
  if (a.pos.length !== 2) usage();
  return a;
}

// splitmix64: deterministic 64-bit stream
function rng(seed) {
  let s = BigInt.asUintN(64, seed);
  return () => {
    s = BigInt.asUintN(64, s + 0x9e3779b97f4a7c15n);
    let z = s;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    return z ^ (z >> 31n);
  };
}

function makeInput(meta, dims, next) {
  if (!meta.isTensor) throw new Error(`input ${meta.name} is not a tensor`);
  const t = TYPES[meta.type];
  if (!t) throw new Error(`input ${meta.name}: dtype ${meta.type} not supported`);
  const shape = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : dims[d] ?? 1));
  const n = shape.reduce((x, y) => x * y, 1);
  const data = new t[1](n);
  for (let i = 0; i < n; i++) {
    const r = next();
    const u = Number(r >> 11n) / 2 ** 53; // [0, 1)
    if (meta.type === 'float32' || meta.type === 'float64') data[i] = 2 * u - 1;
    else if (meta.type === 'bool') data[i] = Number(r & 1n);
    else if (t[1] === BigInt64Array || t[1] === BigUint64Array) data[i] = BigInt(Math.floor(u * 10));
    else data[i] = Math.floor(u * 10);
  }
  return new ort.Tensor(meta.type, data, shape);
}

function save(dir, file, tensor) {
  const d = tensor.data;
  // typed arrays are little endian on every platform ORT runs on
  fs.writeFileSync(path.join(dir, file), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const [model, out] = a.pos;
  const sess = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const next = rng(a.seed);
  const feeds = {};
  for (const meta of sess.inputMetadata) feeds[meta.name] = makeInput(meta, a.dims, next);
  const results = await sess.run(feeds);
  fs.mkdirSync(out, { recursive: true });
  const manifest = { model: path.basename(model), seed: Number(a.seed), dims: a.dims, inputs: [], outputs: [] };
  const lines = [];
  const entry = (kind, i, name, t) => {
    const file = `${kind}_${i}.bin`;
    const code = TYPES[t.type][0];
    save(out, file, t);
    manifest[`${kind}s`].push({ name, dtype: code, type: t.type, shape: t.dims, file });
    lines.push([kind, i, name, code, t.dims.length, ...t.dims, file].join(' '));
  };
  sess.inputNames.forEach((n, i) => entry('input', i, n, feeds[n]));
  sess.outputNames.forEach((n, i) => entry('output', i, n, results[n]));
  fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
  fs.writeFileSync(path.join(out, 'manifest.txt'), lines.join('\n') + '\n');
  console.log(`ort_reference: ${model} -> ${out} (${lines.length} tensors, onnxruntime-node ${ort.env.versions?.common ?? ''})`);
}

main().catch((e) => {
  console.error(`ort_reference: ${e.message}`);
  process.exit(1);
});
