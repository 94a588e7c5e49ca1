#!/usr/bin/env node
// bench/ort_time.js - time ONNX Runtime on a model, for scripts/bench_eval.sh.
//
//   node bench/ort_time.js MODEL.onnx [--runs N] [--dim SYM=VALUE ...]
//                          [--opt disabled|basic|extended|all] [--compare DIR]
//
// One thread (intra- and inter-op), sequential execution, graph optimization
// level --opt (default 'disabled'). Inputs are those of scripts/ort_check.js
// and bench/eval_bench.c (splitmix64 seed 1; symbolic dims from --dim, else 1).
// One warm-up run, then N timed runs of session.run. Prints one line:
//
//   ort MODEL opt=LEVEL create_ms=C best_ms=B median_ms=M runs=N [max_abs=A max_rel=R]
//
// --compare DIR reads DIR/output_<i>.bin (eval_bench --dump) and adds the
// largest abs / rel difference of those outputs from ORT's (float outputs).
// Exit: 0; 2 usage, load or run error.
'use strict';

const fs = require('fs');
const path = require('path');

function die(msg) {
  console.error(`ort_time: ${msg}`);
  process.exit(2);
}

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  die(`cannot load onnxruntime-node (${e.message.split('\n')[0]}); run npm install --ignore-scripts in ${path.resolve(__dirname, '..')}`);
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, uint8: Uint8Array, int8: Int8Array,
  uint16: Uint16Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array, uint32: Uint32Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

function parseArgs(argv) {
  const a = { runs: 5, dims: {}, opt: 'disabled', compare: null, pos: [] };
  for (let i = 0; i < argv.length; i++) {
    const v = () => argv[++i] ?? die(`${argv[i - 1]} needs a value`);
    if (argv[i] === '--runs') a.runs = Math.max(1, parseInt(v(), 10) || 0) || die('--runs wants N >= 1');
    else if (argv[i] === '--dim') {
      const m = /^([^=]+)=(\d+)$/.exec(v());
      if (!m) die('--dim wants SYM=VALUE');
      a.dims[m[1]] = Number(m[2]);
    } else if (argv[i] === '--opt') {
      a.opt = v();
      if (!['disabled', 'basic', 'extended', 'all'].includes(a.opt)) die(`--opt: unknown level '${a.opt}'`);
    } else if (argv[i] === '--compare') a.compare = v();
    else if (argv[i].startsWith('-')) die(`unknown option ${argv[i]}`);
    else a.pos.push(argv[i]);
  }
  if (a.pos.length !== 1) die('usage: node bench/ort_time.js MODEL.onnx [--runs N] [--dim SYM=VALUE ...] [--opt LEVEL] [--compare DIR]');
  return a;
}

// splitmix64 and the input recipe of scripts/ort_reference.js
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
  const T = ARRAYS[meta.type];
  if (!T || meta.type === 'float16') die(`input ${meta.name}: dtype ${meta.type} not supported here`);
  const shape = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : dims[d] ?? 1));
  const n = shape.reduce((x, y) => x * y, 1);
  const data = new T(n);
  for (let i = 0; i < n; i++) {
    const r = next();
    const u = Number(r >> 11n) / 2 ** 53;
    if (meta.type === 'float32' || meta.type === 'float64') data[i] = 2 * u - 1;
    else if (meta.type === 'bool') data[i] = Number(r & 1n);
    else if (T === BigInt64Array || T === BigUint64Array) data[i] = BigInt(Math.floor(u * 10));
    else data[i] = Math.floor(u * 10);
  }
  return new ort.Tensor(meta.type, data, shape);
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const model = a.pos[0];
  let t0 = performance.now();
  let sess;
  try {
    sess = await ort.InferenceSession.create(model, {
      graphOptimizationLevel: a.opt, intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    });
  } catch (e) {
    die(`${model}: ${e.message.split('\n')[0]}`);
  }
  const create = performance.now() - t0;
  const next = rng(1n);
  const feeds = {};
  for (const meta of sess.inputMetadata) feeds[meta.name] = makeInput(meta, a.dims, next);
  let out;
  const times = [];
  for (let r = -1; r < a.runs; r++) { // run -1: warm-up
    t0 = performance.now();
    try {
      out = await sess.run(feeds);
    } catch (e) {
      die(`${model}: run failed: ${e.message.split('\n')[0]}`);
    }
    if (r >= 0) times.push(performance.now() - t0);
  }
  times.sort((x, y) => x - y);
  let line = `ort ${model} opt=${a.opt} create_ms=${create.toFixed(3)} best_ms=${times[0].toFixed(3)} ` +
    `median_ms=${times[Math.floor(a.runs / 2)].toFixed(3)} runs=${a.runs}`;
  if (a.compare) {
    let maxAbs = 0, maxRel = 0;
    sess.outputNames.forEach((name, i) => {
      const t = out[name];
      if (t.type !== 'float32' && t.type !== 'float64') return;
      const file = path.join(a.compare, `output_${i}.bin`);
      let buf;
      try {
        buf = fs.readFileSync(file);
      } catch (e) {
        die(`--compare: ${e.message}`);
      }
      const T = ARRAYS[t.type];
      if (buf.length !== t.data.byteLength) die(`${file}: ${buf.length} bytes, ORT's '${name}' has ${t.data.byteLength}`);
      const got = new T(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
      for (let k = 0; k < got.length; k++) {
        const want = t.data[k];
        const d = Number.isNaN(got[k]) !== Number.isNaN(want) ? Infinity : got[k] === want ? 0 : Math.abs(got[k] - want);
        if (d > maxAbs) maxAbs = d;
        const rel = d / Math.max(Math.abs(want), 1e-12);
        if (d > 0 && rel > maxRel) maxRel = rel;
      }
    });
    line += ` max_abs=${maxAbs.toExponential(2)} max_rel=${maxRel.toExponential(2)}`;
  }
  console.log(line);
}

main().catch((e) => die(e.stack || e.message));
