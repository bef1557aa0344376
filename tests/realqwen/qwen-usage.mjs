#!/usr/bin/env node
// qwen-usage.mjs QWEN_HOME_DIR: what Qwen Code's own /stats reader sees, as JSON:
// loadUsageHistory() (persistRebuild: false, so nothing is written) and aggregateUsage('all').
// Output: {"from": "file"|"rebuild", "totals": {sessions, requests, tokens},
// usage_record.jsonl beyond one per session. Exit 2 when Qwen's code cannot be loaded.
import fs from 'node:fs';
import path from 'node:path';
import { loadQwenInternals } from './qwen-internals.mjs';

const dir = path.resolve(process.argv[2] || '');
if (!process.argv[2] || !fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
  console.error('usage: qwen-usage.mjs QWEN_HOME_DIR');
  process.exit(2);
}
process.env.QWEN_HOME = dir;
delete process.env.QWEN_RUNTIME_DIR;
const q = await loadQwenInternals();
if (typeof q.loadUsageHistory !== 'function' || typeof q.aggregateUsage !== 'function') {
  console.error(`qwen-usage: loadUsageHistory/aggregateUsage not found in Qwen Code ${q.version}`);
  process.exit(2);
}
const usagePath = path.join(dir, 'usage_record.jsonl');
let v1 = 0;
if (fs.existsSync(usagePath)) {
  for (const line of fs.readFileSync(usagePath, 'utf8').split(/\r?\n/)) {
    try { if (JSON.parse(line)?.version === 1) v1++; } catch {}
  }
}
const hist = await q.loadUsageHistory(undefined, { persistRebuild: false });
const agg = q.aggregateUsage(hist, 'all');
const sessions = {};
for (const r of hist) {
  const tokens = Object.values(r.models || {}).reduce((a, m) => a + (m.totalTokens || 0), 0);
  const requests = Object.values(r.models || {}).reduce((a, m) => a + (m.requests || 0), 0);
  sessions[r.sessionId] = { requests, tokens, line: JSON.stringify(r) };
}
const out = {
  qwenVersion: q.version,
  from: v1 > 0 ? 'file' : 'rebuild',
  totals: {
    sessions: agg.sessionCount,
    requests: agg.totalRequests,
    tokens: Object.values(agg.models).reduce((a, m) => a + (m.totalTokens || 0), 0),
  },
  sessions,
};
console.log(JSON.stringify(out, null, 1));
