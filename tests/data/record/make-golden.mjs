#!/usr/bin/env node
// make-golden.mjs QWEN_PKG_DIR: writes the first-record cases of this directory (cases/*.jsonl)
// and golden.jsonl, one line per case: {"case": name, "result": "record" | "none" | "error",
// "sessionId": ..., "cwd": ...} as Qwen Code's own SessionService.readFirstMaintainableRecord()
// (the newer removeSession's head reader) sees the file. test_record compares record_read_head.
//   node tests/data/record/make-golden.mjs /tmp/q/node_modules/@qwen-code/qwen-code
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = process.argv[2];
if (!pkgDir) { console.error('usage: make-golden.mjs QWEN_PKG_DIR'); process.exit(2); }

const SID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const rec = (o = {}) => JSON.stringify({ uuid: 'u0', sessionId: SID, timestamp: '2026-11-30T03:52:44.803Z', type: 'user', cwd: '/srv/x', ...o });
const cases = {
  'empty': '',
  'blank-lines': '\n\n   \n\t\n',
  'normal': rec() + '\n' + rec({ cwd: '/second' }) + '\n',
  'no-newline': rec(),
  'crlf': rec() + '\r\n',
  'bom': '\ufeff' + rec() + '\n',
  'array-then-record': '[1]\n' + rec({ cwd: '/after-array' }) + '\n',
  'string-only': '"x"',
  'junk-then-record': 'not json\n{"broken":\n' + rec({ cwd: '/after-junk' }) + '\n',
  'glued': rec({ cwd: '/first' }) + rec({ cwd: '/second' }) + '\n',
  'glued-with-junk': 'xx' + rec({ cwd: '/in-junk' }) + 'yy\n',
  'session-id-number': rec({ sessionId: 42 }) + '\n',
  'no-cwd': rec({ cwd: undefined }) + '\n',
  'cwd-object': rec({ cwd: { a: 1 } }) + '\n',
  'only-junk': 'junk\n[1]\n"s"\n',
  'truncated': rec().slice(0, 50),
  'nested-braces-in-strings': 'z{"a":"}{"}' + '\n',
  'duplicate-keys': rec().replace('"cwd":"/srv/x"', '"cwd":"/one","cwd":"/two"') + '\n',
  'nbsp-around': '\u00a0' + rec() + '\u2028\n',
};
const raw = {
  'invalid-utf8': Buffer.concat([Buffer.from(rec({ cwd: '/a@b' }).split('@')[0]), Buffer.from([0xff, 0xe6, 0x97]), Buffer.from(rec({ cwd: '/a@b' }).split('@')[1]), Buffer.from('\n')]),
  'nul-bytes': Buffer.concat([Buffer.from([0, 0]), Buffer.from(rec()), Buffer.from([0]), Buffer.from('\n')]),
};

const dir = path.join(HERE, 'cases');
fs.mkdirSync(dir, { recursive: true });
for (const [name, text] of Object.entries(cases)) fs.writeFileSync(path.join(dir, name + '.jsonl'), text);
for (const [name, buf] of Object.entries(raw)) fs.writeFileSync(path.join(dir, name + '.jsonl'), buf);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'record-golden-'));
process.env.QWEN_HOME = tmp;
delete process.env.QWEN_RUNTIME_DIR;
const { loadQwenInternals } = await import(pathToFileURL(path.join(HERE, '../../realqwen/qwen-internals.mjs')).href);
const q = await loadQwenInternals(pkgDir);
const svc = new q.SessionService('/srv/x');
const out = [];
for (const name of [...Object.keys(cases), ...Object.keys(raw)].sort()) {
  const file = path.join(dir, name + '.jsonl');
  const fh = await fs.promises.open(file, 'r');
  let line;
  try {
    const r = await svc.readFirstMaintainableRecord(fh, file);
    line = r === undefined ? { case: name, result: 'none' }
      : { case: name, result: 'record', sessionId: typeof r.sessionId === 'string' ? r.sessionId : null, cwd: typeof r.cwd === 'string' ? r.cwd : null };
  } catch (e) {
    line = { case: name, result: 'error', error: e.name };
  } finally {
    await fh.close();
  }
  out.push(JSON.stringify(line));
}
fs.writeFileSync(path.join(HERE, 'golden.jsonl'), out.join('\n') + '\n');

// Titles: SessionService.readSessionTitleInfoFromFile() (tail window text scan, then head).
const T = (t, src, extra = {}) => JSON.stringify({ type: 'system', subtype: 'custom_title', timestamp: '2026-11-30T00:00:00Z', systemPayload: src === undefined ? { customTitle: t } : { customTitle: t, titleSource: src }, ...extra }) + '\n';
const pad = (n) => JSON.stringify({ timestamp: '2026-11-30T00:00:05Z', pad: 'x'.repeat(n) }) + '\n';
const titles = {
  'manual': T('Mine', 'manual'), 'auto': T('Auto', 'auto'), 'legacy': T('Legacy'), 'unknown-source': T('Odd', 'robot'),
  'last-wins': T('First') + T('Second', 'auto'), 'empty': T(''), 'escaped': T('My "q" \\ \u00e9\n'),
  'in-user-text': JSON.stringify({ type: 'user', message: '"subtype":"custom_title" "customTitle":"fake"' }) + '\n',
  'top-level-fields': JSON.stringify({ type: 'user', subtype: 'custom_title', customTitle: 'top' }) + '\n',
  'head-only': T('Early', 'manual') + pad(100).repeat(700),
  'empty-in-tail-hides-head': T('Early', 'manual') + pad(100).repeat(700) + T(''),
  'no-final-newline': T('Inc', 'auto').slice(0, -1),
  'source-number': JSON.stringify({ type: 'system', subtype: 'custom_title', systemPayload: { customTitle: 'N', titleSource: 5 } }) + '\n',
  'title-number': JSON.stringify({ type: 'system', subtype: 'custom_title', systemPayload: { customTitle: 7 } }) + '\n',
  'bad-escape': '{"type":"system","subtype":"custom_title","systemPayload":{"customTitle":"a\\x b"}}\n',
  'spaced': '{"type":"system","subtype":"custom_title","systemPayload":{"customTitle" :\t"sp"}}\n',
  'spaced-marker': '{"type":"system", "subtype": "custom_title","systemPayload":{"customTitle":"no"}}\n',
};
const tdir = path.join(HERE, 'titles');
fs.mkdirSync(tdir, { recursive: true });
const tout = [];
for (const name of Object.keys(titles).sort()) {
  const file = path.join(tdir, name + '.jsonl');
  fs.writeFileSync(file, titles[name]);
  const r = svc.readSessionTitleInfoFromFile(file);
  tout.push(JSON.stringify({ case: name, title: r.title ?? null, source: r.source ?? null }));
}
fs.writeFileSync(path.join(HERE, 'titles-golden.jsonl'), tout.join('\n') + '\n');
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`wrote ${out.length} head cases and ${tout.length} title cases (Qwen ${q.version})`);
