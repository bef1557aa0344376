#!/usr/bin/env node
// qwen-list-all.mjs MANIFEST [--page N] [--no-archived]
// Benchmark helper: lists every project's sessions with Qwen Code's OWN
// SessionService.listSessions (the code behind `qwen sessions list` and the
// /resume picker), paging through active and archived sessions, for every
// project cwd in MANIFEST (lines "qwen-dir<TAB>project-dir<TAB>cwd", as written
// by bench/gen-tree --manifest). Read-only. Prints one JSON line:
// {"listed":N,"projects":P,"cwds":C,"loadMs":..,"listMs":..}
import fs from 'node:fs';
import { loadQwenInternals } from './qwen-internals.mjs';

const argv = process.argv.slice(2);
const manifest = argv.find((a) => !a.startsWith('--'));
const pageIdx = argv.indexOf('--page');
const pageSize = pageIdx >= 0 ? Number(argv[pageIdx + 1]) : 200;
const states = argv.includes('--no-archived') ? ['active'] : ['active', 'archived'];
if (!manifest) {
  console.error('usage: qwen-list-all.mjs MANIFEST [--page N] [--no-archived]');
  process.exit(2);
}
const rows = fs.readFileSync(manifest, 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t'));
const t0 = performance.now();
const q = await loadQwenInternals();
if (typeof q.SessionService !== 'function') {
  console.error('qwen-list-all: SessionService not found in the installed Qwen Code bundle');
  process.exit(2);
}
const t1 = performance.now();
let listed = 0;
const projects = new Set();
for (const [root, dir, cwd] of rows) {
  process.env.QWEN_HOME = root;
  delete process.env.QWEN_RUNTIME_DIR;
  projects.add(`${root}/${dir}`);
  const svc = new q.SessionService(cwd);
  for (const archiveState of states) {
    let cursor;
    for (let page = 0; page < 100000; page++) {
      const r = await svc.listSessions({ size: pageSize, archiveState, ...(cursor !== undefined ? { cursor } : {}) });
      listed += r.items.length;
      if (!r.hasMore || r.nextCursor === undefined) break;
      cursor = r.nextCursor;
    }
  }
}
const t2 = performance.now();
console.log(JSON.stringify({ listed, projects: projects.size, cwds: rows.length, loadMs: Math.round(t1 - t0), listMs: Math.round(t2 - t1), qwenVersion: q.version }));
