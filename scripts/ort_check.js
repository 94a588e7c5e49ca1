#!/usr/bin/env node
// scripts/ort_check.js - cross-check a passhost rewrite with ONNX Runtime.
//
//   node scripts/ort_check.js ORIGINAL.onnx REWRITTEN.onnx [options]
//
// Runs both models in ONNX Runtime (graph optimizations disabled, one thread,
// sequential) on the same seeded random inputs and compares every output of
// the original, by name, with the rewritten model's output of that name.
// Prints max abs / max rel error per output.
//
// Options:
//   --shape NAME:1x16x64  full shape of input NAME (repeatable); without it a
//                         symbolic dim is 1
//   --dim SYM=VALUE       value of symbolic dim SYM in every input (repeatable)
//   --symbolic N[,N...]   value of every other symbolic dim (default 1); with a
//                         list, run r uses the (r mod length)-th value, so one
//                         call can check e.g. seq=1 and seq=3
//   --runs N              number of input sets (default 3); run r uses seed S+r
//   --seed S              first seed (default 1: run 0 feeds the same bytes as
//                         scripts/ort_reference.js with its default seed)
//   --atol A  --rtol R    tolerance, |got - want| <= A + R * |want|
//                         (defaults 1e-5, 1e-4, as passhost --verify-atol/--verify-rtol)
//   -q, --quiet           print only the verdict line
//
// Inputs are made as in scripts/ort_reference.js: splitmix64, floats uniform in
// [-1, 1), integers in [0, 10), bools fair coins (float16 added here). Integer,
// bool and string outputs must match exactly; NaN matches only NaN.
//
// Exit: 0 all outputs within tolerance; 1 a mismatch (value, shape, dtype, or
// a missing output/input); 2 usage error or a model that ORT cannot load/run.
// Needs `npm install --ignore-scripts` (onnxruntime-node) at the repo root.
'use strict';

const path = require('path');

const USAGE = 'usage: node scripts/ort_check.js ORIGINAL.onnx REWRITTEN.onnx ' +
  '[--shape NAME:1x16x64 ...] [--dim SYM=N ...] [--symbolic N[,N...]] [--runs N] [--seed S] [--atol A] [--rtol R] [-q]';

function die(code, msg) {
  console.error(`ort_check: ${msg}`);
  process.exit(code);
}
function usage(msg) {
  if (msg) console.error(`ort_check: ${msg}`);
  console.error(USAGE);
  process.exit(2);
}

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  die(2, `cannot load onnxruntime-node (${e.message.split('\n')[0]}); run \`npm install --ignore-scripts\` in ${path.resolve(__dirname, '..')}`);
}

// ORT type name -> typed array
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array,
  uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array,
  int32: Int32Array, int64: BigInt64Array, uint32: Uint32Array, uint64: BigUint64Array,
  bool: Uint8Array,
};
const FLOATS = new Set(['float32', 'float64', 'float16']);

function number(s, what, integer) {
  const v = Number(s);
  if (s === undefined || s === '' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < 0)
    usage(`${what} wants a ${integer ? 'non-negative integer' : 'non-negative number'}, not '${s ?? ''}'`);
  return v;
}

function parseArgs(argv) {
  const a = { runs: 3, seed: 1n, atol: 1e-5, rtol: 1e-4, shapes: {}, dims: {}, symbolic: [1], quiet: false, pos: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const key = eq > 0 ? arg.slice(0, eq) : arg;
    const val = () => (eq > 0 ? arg.slice(eq + 1) : argv[++i]);
    if (key === '--shape') {
      const v = val() ?? '';
      const m = /^(.+):(\d+(?:x\d+)*)?$/.exec(v);
      if (!m) usage(`--shape wants NAME:DxDxD (e.g. tokens:1x16x64), not '${v}'`);
      a.shapes[m[1]] = m[2] === undefined ? [] : m[2].split('x').map(Number);
    } else if (key === '--dim') {
      const v = val() ?? '';
      const m = /^([^=]+)=(\d+)$/.exec(v);
      if (!m) usage(`--dim wants SYM=VALUE, not '${v}'`);
      a.dims[m[1]] = Number(m[2]);
    } else if (key === '--symbolic') {
      const v = val() ?? '';
      if (!/^\d+(,\d+)*$/.test(v)) usage(`--symbolic wants N or N,N,..., not '${v}'`);
      a.symbolic = v.split(',').map(Number);
    } else if (key === '--runs') {
      a.runs = number(val(), '--runs', true);
      if (a.runs < 1) usage('--runs must be at least 1');
    } else if (key === '--seed') {
      const v = val();
      if (!/^\d+$/.test(v ?? '')) usage(`--seed wants a non-negative integer, not '${v ?? ''}'`);
      a.seed = BigInt(v);
    } else if (key === '--atol') a.atol = number(val(), '--atol', false);
    else if (key === '--rtol') a.rtol = number(val(), '--rtol', false);
    else if (key === '-q' || key === '--quiet') a.quiet = true;
    else if (key === '-h' || key === '--help') { console.log(USAGE); process.exit(0); }
    else if (arg.startsWith('-') && arg !== '-') usage(`unknown option '${arg}'`);
    else a.pos.push(arg);
  }
  if (a.pos.length !== 2) usage(a.pos.length ? 'want exactly two models' : '');
  return a;
}

// splitmix64, as in scripts/ort_reference.js
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

// float32 -> IEEE half bits (round to nearest even), and back
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function toHalf(x) {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = ((b >>> 23) & 0xff) - 127 + 15;
  let mant = b & 0x7fffff;
  if (exp >= 31) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - exp;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (exp << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}
function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

function inputShape(meta, a, sym) {
  if (a.shapes[meta.name]) {
    const want = a.shapes[meta.name];
    if (want.length !== meta.shape.length)
      die(2, `--shape ${meta.name}: rank ${want.length}, but the model's input has rank ${meta.shape.length} [${meta.shape.join(',')}]`);
    meta.shape.forEach((d, i) => {
      if (typeof d === 'number' && d >= 0 && d !== want[i])
        die(2, `--shape ${meta.name}: dim ${i} is ${want[i]}, but the model fixes it to ${d}`);
    });
    return want;
  }
  return meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : a.dims[d] ?? sym));
}

// Same generator as ort_reference.js makeInput, plus float16.
function makeInput(meta, shape, next) {
  const T = ARRAYS[meta.type];
  if (!T) throw new Error(`input '${meta.name}': dtype ${meta.type} not supported`);
  const n = shape.reduce((x, y) => x * y, 1);
  const data = new T(n);
  for (let i = 0; i < n; i++) {
    const r = next();
    const u = Number(r >> 11n) / 2 ** 53; // [0, 1)
    if (meta.type === 'float32' || meta.type === 'float64') data[i] = 2 * u - 1;
    else if (meta.type === 'float16') data[i] = toHalf(2 * u - 1);
    else if (meta.type === 'bool') data[i] = Number(r & 1n);
    else if (T === BigInt64Array || T === BigUint64Array) data[i] = BigInt(Math.floor(u * 10));
    else data[i] = Math.floor(u * 10);
  }
  return new ort.Tensor(meta.type, data, shape);
}

function fmt(x) {
  if (!Number.isFinite(x)) return String(x);
  return x === 0 ? '0' : x.toExponential(2);
}

// Compare got (rewritten) against want (original) into res; returns a reason
// string for structural mismatches, else null.
function compare(got, want, a, res) {
  if (got.type !== want.type) return `dtype ${got.type}, original ${want.type}`;
  if (got.dims.length !== want.dims.length || got.dims.some((d, i) => d !== want.dims[i]))
    return `shape [${got.dims.join(',')}], original [${want.dims.join(',')}]`;
  const x = got.data, y = want.data, n = y.length;
  const isFloat = FLOATS.has(want.type), half = want.type === 'float16';
  if (want.type === 'string') {
    for (let i = 0; i < n; i++) if (x[i] !== y[i]) { res.mismatches++; res.maxAbs = Infinity; }
    return null;
  }
  for (let i = 0; i < n; i++) {
    let p = x[i], q = y[i];
    if (typeof q === 'bigint') {
      if (p !== q) {
        res.mismatches++;
        const d = Number(p > q ? p - q : q - p);
        res.maxAbs = Math.max(res.maxAbs, d);
        res.maxRel = Math.max(res.maxRel, d / Math.max(Math.abs(Number(q)), 1e-12));
      }
      continue;
    }
    if (half) { p = fromHalf(p); q = fromHalf(q); }
    if (Number.isNaN(p) || Number.isNaN(q)) {
      if (!(Number.isNaN(p) && Number.isNaN(q))) { res.mismatches++; res.maxAbs = Infinity; }
      continue;
    }
    const d = p === q ? 0 : Math.abs(p - q); // equal infinities are no error
    if (d > res.maxAbs) res.maxAbs = d;
    const rel = d / Math.max(Math.abs(q), 1e-12);
    if (d > 0 && rel > res.maxRel) res.maxRel = rel;
    const tol = isFloat ? a.atol + a.rtol * Math.abs(q) : 0;
    if (d > tol) res.mismatches++;
  }
  res.elements += n;
  return null;
}

const SESSION = {
  graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1,
  executionMode: 'sequential',
};

async function load(file) {
  try {
    return await ort.InferenceSession.create(file, SESSION);
  } catch (e) {
    die(2, `${file}: ONNX Runtime cannot load it: ${e.message.split('\n')[0]}`);
  }
}

async function run(sess, file, feeds) {
  try {
    return await sess.run(feeds);
  } catch (e) {
    die(2, `${file}: ONNX Runtime cannot run it: ${e.message.split('\n')[0]}`);
  }
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const [origFile, newFile] = a.pos;
  const orig = await load(origFile);
  const rew = await load(newFile);
  const problems = [];

  // interface: every input of the rewritten model must be one of the original's
  const origIn = new Map(orig.inputMetadata.map((m) => [m.name, m]));
  for (const m of rew.inputMetadata) {
    const o = origIn.get(m.name);
    if (!o) problems.push(`input '${m.name}' is new in the rewritten model`);
    else if (o.type !== m.type) problems.push(`input '${m.name}': dtype ${m.type}, original ${o.type}`);
  }
  for (const name of Object.keys(a.shapes))
    if (!origIn.has(name))
      die(2, `--shape ${name}: the original model has no input of that name (inputs: ${[...origIn.keys()].join(', ')})`);
  for (const m of orig.inputMetadata)
    if (!m.isTensor) die(2, `input '${m.name}' is not a tensor: not supported`);
  // input shapes of run r: shapesOf[r % a.symbolic.length]
  const shapesOf = a.symbolic.map((sym) => orig.inputMetadata.map((m) => inputShape(m, a, sym)));
  // a rewrite may have fixed symbolic dims (passhost --set model.input_shape=...)
  for (const m of rew.inputMetadata) {
    const i = orig.inputNames.indexOf(m.name);
    if (i < 0) continue;
    for (const shapes of shapesOf) {
      const fed = shapes[i];
      if (fed.length !== m.shape.length || m.shape.some((d, k) => typeof d === 'number' && d >= 0 && d !== fed[k]))
        die(2, `input '${m.name}' would get shape ${fed.join('x')}, but the rewritten model wants ` +
          `[${m.shape.join(',')}]: give the shape it was rewritten for, e.g. --shape ${m.name}:` +
          `${m.shape.map((d, k) => (typeof d === 'number' && d >= 0 ? d : fed[k] ?? 1)).join('x')}`);
    }
  }

  const results = new Map(orig.outputNames.map((n) => [n, { mismatches: 0, maxAbs: 0, maxRel: 0, elements: 0, why: null }]));
  const rewOut = new Set(rew.outputNames);
  for (const n of orig.outputNames) if (!rewOut.has(n)) results.get(n).why = 'missing in the rewritten model';
  for (const n of rew.outputNames) if (!results.has(n)) problems.push(`output '${n}' is new in the rewritten model`);

  if (!problems.length) {
    for (let r = 0; r < a.runs; r++) {
      const next = rng(a.seed + BigInt(r));
      const shapes = shapesOf[r % shapesOf.length];
      const feeds = {};
      orig.inputMetadata.forEach((m, i) => {
        try {
          feeds[m.name] = makeInput(m, shapes[i], next);
        } catch (e) {
          die(2, e.message);
        }
      });
      const rewFeeds = {};
      for (const n of rew.inputNames) rewFeeds[n] = feeds[n];
      const want = await run(orig, origFile, feeds);
      const got = await run(rew, newFile, rewFeeds);
      for (const [name, res] of results) {
        if (res.why) continue;
        res.why = compare(got[name], want[name], a, res);
      }
    }
  }

  if (!a.quiet) {
    const texts = shapesOf.slice(0, a.runs).map((shapes) =>
      orig.inputMetadata.map((m, i) => `${m.name}[${shapes[i].join('x')}]`).join(' '));
    const shapeText = [...new Set(texts)].join(' | ');
    console.log(`ort_check: ${path.basename(origFile)} vs ${path.basename(newFile)}: ${a.runs} run${a.runs === 1 ? '' : 's'}, ` +
      `seed ${a.seed}, atol ${a.atol}, rtol ${a.rtol}, inputs ${shapeText || '(none)'}, onnxruntime-node ${ort.env.versions?.common ?? '?'}`);
    const w = Math.max(6, ...[...results.keys()].map((n) => n.length));
    for (const [name, res] of results) {
      if (problems.length && !res.why) {
        console.log(`  output ${name.padEnd(w)}  not compared (the interface differs)`);
        continue;
      }
      const verdict = res.why ? `MISMATCH: ${res.why}` : res.mismatches ? `MISMATCH: ${res.mismatches} of ${res.elements} elements (all runs)` : 'ok';
      console.log(`  output ${name.padEnd(w)}  max abs ${fmt(res.maxAbs).padStart(8)}  max rel ${fmt(res.maxRel).padStart(8)}  ${verdict}`);
    }
  }
  for (const p of problems) console.log(`  MISMATCH: ${p}`);
  const bad = problems.length + [...results.values()].filter((r) => r.why || r.mismatches).length;
  const worstAbs = Math.max(0, ...[...results.values()].map((r) => r.maxAbs));
  const worstRel = Math.max(0, ...[...results.values()].map((r) => r.maxRel));
  console.log(`ort_check: ${bad ? 'FAIL' : 'ok'} ${origFile} -> ${newFile}: ${results.size} output${results.size === 1 ? '' : 's'}, ` +
    `${bad} mismatch${bad === 1 ? '' : 'es'}, max abs ${fmt(worstAbs)}, max rel ${fmt(worstRel)}`);
  process.exit(bad ? 1 : 0);
}

// scripts/ort_bench.js feeds ORT the same inputs.
module.exports = { rng, makeInput, inputShape };

if (require.main === module) main().catch((e) => die(2, e.stack || e.message));
