#!/usr/bin/env node
// scripts/ort_bench.js - ONNX Runtime session creation time and latency of a
// model at one graph optimization level, and optionally the model ORT makes.
//
//   node scripts/ort_bench.js MODEL [--level disabled|basic|extended|all]
//        [--runs N] [--save-optimized OUT.onnx] [--symbolic N]
//
// One thread, sequential execution.  Inputs are ort_check.js's (seed 1,
// symbolic dims N, default 1).  Session creation is timed once per call (the
// first creation of a process pays ORT's own start-up: bench/zoo.sh creates a
// throwaway session first); latency is 2 warm-up runs, then N timed runs
// (default 20).  Prints one JSON line:
//   {"model":..., "level":..., "create_ms":..., "run_ms_median":..., "run_ms_min":...}
// --save-optimized writes the graph ORT ends with at that level
// (optimizedModelFilePath), whose node count is what ORT's level leaves.
'use strict';

const path = require('path');
const ort = require('onnxruntime-node');
const { rng, makeInput, inputShape } = require('./ort_check.js');

function usage(msg) {
  if (msg) console.error(`ort_bench: ${msg}`);
  console.error('usage: node scripts/ort_bench.js MODEL [--level L] [--runs N] [--save-optimized OUT] [--symbolic N] [--warm]');
  process.exit(2);
}

async function main() {
  const a = { level: 'disabled', runs: 20, save: null, sym: 1, warm: false, model: null };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => (i + 1 < argv.length ? argv[++i] : usage(`${k} wants a value`));
    if (k === '--level') a.level = val();
    else if (k === '--runs') a.runs = Number(val());
    else if (k === '--save-optimized') a.save = val();
    else if (k === '--symbolic') a.sym = Number(val());
    else if (k === '--warm') a.warm = true;
    else if (k.startsWith('-')) usage(`unknown option '${k}'`);
    else if (!a.model) a.model = k;
    else usage('one model only');
  }
  if (!a.model) usage();
  if (!['disabled', 'basic', 'extended', 'all'].includes(a.level)) usage(`unknown level '${a.level}'`);
  const opts = {
    graphOptimizationLevel: a.level, intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
  };
  // ORT's process start-up (thread pools, kernel registry) is not the model's cost
  if (a.warm) await ort.InferenceSession.create(a.model, { ...opts, graphOptimizationLevel: 'disabled' });
  if (a.save) opts.optimizedModelFilePath = path.resolve(a.save);
  const t0 = process.hrtime.bigint();
  const sess = await ort.InferenceSession.create(a.model, opts);
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const next = rng(1n);
  const feeds = {};
  for (const m of sess.inputMetadata) feeds[m.name] = makeInput(m, inputShape(m, { shapes: {}, dims: {} }, a.sym), next);
  const times = [];
  for (let r = 0; r < a.runs + 2; r++) {
    const t = process.hrtime.bigint();
    await sess.run(feeds);
    if (r >= 2) times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((x, y) => x - y);
  const med = times.length ? times[Math.floor(times.length / 2)] : 0;
  console.log(JSON.stringify({
    model: a.model, level: a.level, create_ms: +createMs.toFixed(2),
    run_ms_median: +med.toFixed(3), run_ms_min: +(times[0] ?? 0).toFixed(3),
  }));
}

main().catch((e) => { console.error(`ort_bench: ${e.message.split('\n')[0]}`); process.exit(2); });
