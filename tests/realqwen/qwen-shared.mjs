#!/usr/bin/env node
// qwen-shared.mjs seed QWEN_HOME_DIR [--pin ID,...] [--group ID,...] [--task ID,...]
// qwen-shared.mjs check QWEN_HOME_DIR --cwds CWD,...
//
// The files Qwen Code shares between the sessions of a project, written and read by Qwen
// Code's OWN code (the bundled Logger, SessionOrganizationService, Storage and cron-task file
// functions of the installed @qwen-code/qwen-code):
//   seed   for every session with a readable first record: two prompts through its Logger
//          (tmp/<hash>/logs.json), an organization entry (pinned then unpinned, so no
//          protection; --pin and --group ids stay pinned / in a group), and a
//          workflows/generated/review/<reviewSessionDirName>/ script; --task ids get a durable
//          cron task bound to them (tmp/<hash>/scheduled_tasks.json). Prints {"cwds": [...]}.
//   check  for every cwd: the ↑ prompt history (Logger.getPreviousUserMessages), the
//          organization snapshot (groups, pins) and the scheduled tasks, as JSON. Exit 1 when
//          Qwen cannot read one of them (a parse error, an unreadable store).
// Exit 2: bad arguments or Qwen's code could not be loaded.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_PKG_DIR } from './qwen-internals.mjs';

const WANTED = ['Logger', 'SessionOrganizationService', 'Storage', 'readCronTasks', 'addCronTask',
  'generateCronTaskId'];

function exportNames(src) {
  const i = src.lastIndexOf('\nexport {');
  if (i < 0) return [];
  const j = src.indexOf('};', i);
  return src.slice(i + 9, j).split(',').map((s) => s.trim()).filter(Boolean)
    .map((s) => { const m = s.match(/^(\S+)\s+as\s+(\S+)$/); return m ? [m[1], m[2]] : [s, s]; });
}

async function load() {
  const dir = path.join(process.env.QWEN_PKG_DIR || DEFAULT_PKG_DIR, 'chunks');
  const out = {};
  for (const f of fs.readdirSync(dir).sort()) {
    if (!f.startsWith('chunk-') || !f.endsWith('.js')) continue;
    const src = fs.readFileSync(path.join(dir, f), 'utf8');
    const names = exportNames(src).map((n) => n[1]).filter((n) => WANTED.includes(n) && !out[n]);
    if (names.length === 0) continue;
    const mod = await import(pathToFileURL(path.join(dir, f)).href);
    for (const n of names) out[n] = mod[n];
  }
  const missing = WANTED.filter((w) => typeof out[w] !== 'function');
  if (missing.length) {
    console.error(`qwen-shared: not found in Qwen's bundle: ${missing.join(', ')}`);
    process.exit(2);
  }
  return out;
}

const [mode, qdirArg, ...rest] = process.argv.slice(2);
const opt = (name) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1].split(',').filter(Boolean) : [];
};
if (!['seed', 'check'].includes(mode) || !qdirArg) {
  console.error('usage: qwen-shared.mjs seed|check QWEN_HOME_DIR [options]');
  process.exit(2);
}
const QDIR = path.resolve(qdirArg);
process.env.QWEN_HOME = QDIR;
delete process.env.QWEN_RUNTIME_DIR;
const Q = await load();

// Every session Qwen could list: {id, cwd} from the first record of chats/ and chats/archive/.
function sessions() {
  const out = [];
  const projects = path.join(QDIR, 'projects');
  for (const p of fs.readdirSync(projects).sort()) {
    for (const sub of ['chats', 'chats/archive']) {
      const d = path.join(projects, p, sub);
      let names = [];
      try { names = fs.readdirSync(d).sort(); } catch { continue; }
      for (const n of names) {
        if (!/^[0-9a-fA-F-]{32,36}\.jsonl$/.test(n)) continue;
        try {
          const st = fs.lstatSync(path.join(d, n));
          if (!st.isFile()) continue;
          const first = JSON.parse(fs.readFileSync(path.join(d, n), 'utf8').split('\n')[0]);
          if (typeof first.sessionId === 'string' && typeof first.cwd === 'string' &&
              first.sessionId === n.slice(0, -6)) out.push({ id: first.sessionId, cwd: first.cwd });
        } catch { /* not a session Qwen lists */ }
      }
    }
  }
  return out;
}

// generated review scripts: Qwen's reviewSessionDirName() (packages/cli review workflows)
function reviewDirName(id) {
  const digest = crypto.createHash('sha256').update(id).digest('hex').slice(0, 8);
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_')}-${digest}`;
}

if (mode === 'seed') {
  const pin = new Set(opt('--pin')), group = new Set(opt('--group')), task = new Set(opt('--task'));
  const all = sessions();
  const groups = new Map(); // store path -> group id
  const cwds = [...new Set(all.map((s) => s.cwd))].sort();
  let k = 0;
  for (const s of all) {
    const logger = new Q.Logger(s.id, new Q.Storage(s.cwd));
    await logger.initialize();
    await logger.logMessage('user', `first prompt of ${s.id.slice(0, 8)}: "quotes", \\ é ✓ ${k++}`);
    await logger.logMessage('user', `second prompt of ${s.id.slice(0, 8)}\nwith a newline`);

    const org = new Q.SessionOrganizationService(s.cwd);
    const store = org.getStorePath();
    if (!groups.has(store)) groups.set(store, (await org.createGroup({ name: 'Work', color: 'blue' })).id);
    await org.updateSessionOrganization(s.id, { isPinned: true });
    if (!pin.has(s.id)) await org.updateSessionOrganization(s.id, { isPinned: false });
    if (group.has(s.id)) await org.updateSessionOrganization(s.id, { groupId: groups.get(store) });

    const review = path.join(new Q.Storage(s.cwd).getProjectDir(), 'workflows', 'generated', 'review',
      reviewDirName(s.id));
    fs.mkdirSync(review, { recursive: true });
    fs.writeFileSync(path.join(review, 'review.mjs'), '// generated review fan-out\n');

    if (task.has(s.id))
      await Q.addCronTask(s.cwd, { id: Q.generateCronTaskId(), cron: '0 9 * * 1',
        prompt: 'weekly report', recurring: true, createdAt: Date.now(), lastFiredAt: null,
        sessionId: s.id });
  }
  console.log(JSON.stringify({ cwds, sessions: all.length }));
} else {
  const out = {};
  let failed = false;
  for (const cwd of opt('--cwds')) {
    const r = (out[cwd] = {});
    const storage = new Q.Storage(cwd);
    if (fs.existsSync(path.join(storage.getProjectTempDir(), 'logs.json'))) {
      // the Logger backs a file it cannot parse up and starts empty: that would be a failure
      const logger = new Q.Logger('00000000-0000-4000-8000-00000000c0de', storage);
      await logger.initialize();
      if (!logger.initialized) { failed = true; r.error = 'Logger did not initialize'; }
      r.history = await logger.getPreviousUserMessages();
      if (!fs.existsSync(path.join(storage.getProjectTempDir(), 'logs.json'))) {
        failed = true;
        r.error = 'Logger moved logs.json away (unreadable)';
      }
    }
    const warnings = [];
    const org = new Q.SessionOrganizationService(cwd, (w) => warnings.push(w));
    const snap = await org.readSnapshot();
    if (org.readFailed) { failed = true; r.error = `organization store unreadable: ${warnings}`; }
    r.groups = snap.groups.map((g) => g.name);
    r.organized = Object.fromEntries([...snap.sessions].map(([id, v]) =>
      [id, { pinned: Boolean(v.pinnedAt ?? v.isPinned), groupId: v.groupId ?? null }]));
    try {
      r.tasks = (await Q.readCronTasks(cwd)).map((t) => ({ id: t.id, sessionId: t.sessionId ?? null }));
    } catch (e) {
      failed = true;
      r.error = `scheduled tasks: ${e.message}`;
    }
  }
  console.log(JSON.stringify(out, null, 1));
  process.exit(failed ? 1 : 0);
}
