#!/usr/bin/env node
// qwen-salvage.mjs QWEN_HOME CWD TRANSCRIPT [REPEAT]
// Benchmark helper: times Qwen Code's OWN pre-delete usage salvage
// (SessionService.prepareUsageSalvageBestEffort, what removeSession runs
// before unlinking a transcript) on one transcript. Read-only. QWEN_HOME
// should hold no usage line for the session, or Qwen returns early.
// Prints one JSON line: {"bytes":B,"loadMs":..,"ms":[..],"record":bool}; with env
// QWEN_SALVAGE_OUT=FILE it also writes the record (or null) to FILE as one JSON line.
import fs from 'node:fs';
import { loadQwenInternals } from './qwen-internals.mjs';

const [home, cwd, file, repeatArg] = process.argv.slice(2);
if (!home || !cwd || !file) {
  console.error('usage: qwen-salvage.mjs QWEN_HOME CWD TRANSCRIPT [REPEAT]');
  process.exit(2);
}
process.env.QWEN_HOME = home;
delete process.env.QWEN_RUNTIME_DIR;
const t0 = performance.now();
const q = await loadQwenInternals();
const t1 = performance.now();
const svc = new q.SessionService(cwd);
const ms = [];
let record = null;
let error = null;
for (let i = 0; i < Number(repeatArg || 1); i++) {
  const a = performance.now();
  try {
    const prepared = await svc.prepareUsageSalvageBestEffort(file);
    record = prepared ? prepared.record : null;
  } catch (e) {
    error = String(e?.message ?? e);
  }
  ms.push(Math.round(performance.now() - a));
}
if (process.env.QWEN_SALVAGE_OUT) fs.writeFileSync(process.env.QWEN_SALVAGE_OUT, `${JSON.stringify(record)}\n`);
console.log(JSON.stringify({ bytes: fs.statSync(file).size, loadMs: Math.round(t1 - t0), ms, record: !!record, error }));
