#!/usr/bin/env node
// make-golden.mjs QWEN_PKG_DIR: writes the hostile salvage transcripts of this directory
// (cases/*.jsonl) and golden.jsonl, one line per case: {"case": name, "record": <the usage
// record Qwen Code's own pre-delete salvage builds, or null>}. The records come from the
// installed @qwen-code/qwen-code package (SessionService.prepareUsageSalvageBestEffort), so
// test_usage compares qgc against Qwen itself. Run with the package qgc targets (0.24.4):
//   npm install --prefix /tmp/q @qwen-code/qwen-code@0.24.4
//   node tests/data/usage/make-golden.mjs /tmp/q/node_modules/@qwen-code/qwen-code
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = process.argv[2];
if (!pkgDir) { console.error('usage: make-golden.mjs QWEN_PKG_DIR'); process.exit(2); }

const SID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const T0 = '2026-11-30T03:52:44.803Z';
const head = (extra = {}) => JSON.stringify({ uuid: 'u0', parentUuid: null, sessionId: SID, timestamp: T0, type: 'user', cwd: '/srv/x', ...extra });
const rec = (ts, extra = {}) => JSON.stringify({ uuid: 'u', sessionId: SID, timestamp: ts, type: 'user', cwd: '/srv/x', ...extra });
const tel = (ts, ev) => JSON.stringify({ uuid: 't', sessionId: SID, timestamp: ts, type: 'system', subtype: 'ui_telemetry', cwd: '/srv/x', systemPayload: { uiEvent: ev } });
const resp = (model, o = {}) => ({ 'event.name': 'qwen-code.api_response', model, duration_ms: 100, input_token_count: 10, output_token_count: 2, cached_content_token_count: 3, thoughts_token_count: 0, total_token_count: 12, prompt_id: SID + '########0', auth_type: 'openai', ttft_ms: 50, ...o });
const tool = (name, o = {}) => ({ 'event.name': 'qwen-code.tool_call', function_name: name, duration_ms: 7, success: true, decision: 'auto_accept', ...o });
const T = (s) => `2026-11-30T03:53:${String(s).padStart(2, '0')}.000Z`;
const L = (...lines) => lines.join('\n') + '\n';

const cases = {
  'missing-fields': L(head(), tel(T(1), { 'event.name': 'qwen-code.api_response', model: 'm' }), rec(T(2))),
  'string-tokens': L(head(), tel(T(1), resp('m', { input_token_count: '12' })), tel(T(2), resp('m')), rec(T(3))),
  'model-order': L(head(), ...['b', '10', 'a', '2', '007', '4294967295', '4294967294', '-1', '1.5'].map((m, i) => tel(T(i + 1), resp(m)))),
  'proto-model': L(head(), tel(T(1), resp('m')), tel(T(2), resp('constructor')), rec(T(3))),
  'proto-model-error': L(head(), tel(T(1), { 'event.name': 'qwen-code.api_error', model: '__proto__', duration_ms: 5 })),
  'proto-tool-no-decision': L(head(), tel(T(1), tool('toString', { decision: undefined })), tel(T(2), tool('read_file')), rec(T(3))),
  'proto-tool-decision': L(head(), tel(T(1), tool('__proto__')), rec(T(2))),
  'prompt-id-number': L(head(), tel(T(1), resp('m', { prompt_id: 7 })), rec(T(2))),
  'prompt-id-number-no-ttft': L(head(), tel(T(1), resp('m', { prompt_id: 7, ttft_ms: undefined })), rec(T(2))),
  'no-telemetry': L(head(), rec(T(1)), rec(T(2))),
  'unknown-event-only': L(head(), tel(T(1), { 'event.name': 'qwen-code.slash_command' }), rec(T(2))),
  'uievent-string': L(head(), tel(T(1), 'x'), rec(T(2))),
  'uievent-falsy': L(head(), tel(T(1), 0), tel(T(2), ''), rec(T(3))),
  'last-line-truncated': L(head(), tel(T(1), resp('m')), rec(T(2))) + rec(T(3)).slice(0, 40),
  'last-lines-junk': L(head(), tel(T(1), resp('m')), rec(T(2)), 'junk', '[1]', '"str"', '{"broken":'),
  'last-record-no-timestamp': L(head(), tel(T(1), resp('m')), JSON.stringify({ type: 'user' })),
  'first-no-timestamp': L(head({ timestamp: undefined }), tel(T(1), resp('m'))),
  'numeric-timestamps': L(head({ timestamp: 1000.9 }), tel(T(1), resp('m')), rec(null)),
  'array-timestamp': L(head({ timestamp: [T0] }), tel(T(1), resp('m')), rec(true)),
  'no-cwd': L(head({ cwd: undefined }), tel(T(1), resp('m'))),
  'cwd-number': L(head({ cwd: 12 }), tel(T(1), resp('m'))),
  'session-id-number': L(head({ sessionId: 42 }), tel(T(1), resp('m'))),
  'session-id-empty': L(head({ sessionId: '' }), tel(T(1), resp('m'))),
  'no-session-id': L(head({ sessionId: undefined }), tel(T(1), resp('m'))),
  'crlf-and-cr': [head(), tel(T(1), resp('m')), tel(T(2), tool('edit'))].join('\r\n') + '\r' + rec(T(3)) + '\r\n',
  'glued': L(head() + tel(T(1), resp('m')) + tel(T(2), tool('edit')), rec(T(3)) + '{"trunc'),
  'escaped-subtype': L(head(), tel(T(1), resp('m')).replace('"ui_telemetry"', '"ui\\u005ftelemetry"'), rec(T(2))),
  'escaped-subtype-upper': L(head(), tel(T(1), resp('m')).replace('"ui_telemetry"', '"ui\\u005Ftelemetr\\u0079"'), rec(T(2))),
  'escaped-first-letter': L(head(), tel(T(1), tool('t')).replace('"ui_telemetry"', '"\\u0075i_telemetry"').replace('"system"', '"\\u0073ystem"'), rec(T(2))),
  'ansi-escapes-only': L(head(), rec(T(1), { message: 'a\u001b[0m\u00e9 ui\\u005f' }), tel(T(2), resp('m'))),
  'total-zero': L(head(), tel(T(1), resp('m', { total_token_count: 0, thoughts_token_count: 5 })), rec(T(2))),
  'success-truthiness': L(head(), ...[true, 'yes', 1, [], {}, false, 0, '', null, undefined].map((s, i) => tel(T(i + 1), tool('t', { success: s, decision: i % 2 ? 'accept' : undefined })))),
  'metadata-lines': L(head(), tel(T(1), tool('edit', { metadata: { model_added_lines: 3, model_removed_lines: null } })), tel(T(2), tool('edit', { metadata: { model_added_lines: '4' } })), tel(T(3), tool('edit', { metadata: 'str' })), tel(T(4), tool('edit', { metadata: [1] }))),
  'api-error': L(head(), tel(T(1), { 'event.name': 'qwen-code.api_error', model: 'm', duration_ms: 30 }), tel(T(2), resp('m')), tel(T(3), { 'event.name': 'qwen-code.api_error', model: 'n' })),
  'bom-blank-lines': '\ufeff' + L('', '   ', head(), '\t', tel(T(1), resp('m')), '\u00a0', rec(T(2)), ''),
  'first-line-junk': L('not json', '[1]', '"x"', head(), tel(T(1), resp('m'))),
  'only-junk': L('not json', '[1]', '{"broken'),
  'empty': '',
  'float-values': L(head(), tel(T(1), resp('m', { duration_ms: 0.1 })), tel(T(2), resp('m', { duration_ms: 0.2, input_token_count: 1e21, output_token_count: 1e-7, cached_content_token_count: -0 }))),
  'unicode-names': L(head({ cwd: '/srv/日本/🚀' }), tel(T(1), resp('模型')), tel(T(2), tool('😀'))),
  'control-char-names': L(head({ cwd: '/srv/a"b\\c\u0001\u007f\u2028' }), tel(T(1), tool('a\u0001b"c\n'))),
  'model-missing': L(head(), tel(T(1), resp(undefined)), tel(T(2), resp(null)), tel(T(3), resp(5)), tel(T(4), resp(['x', 'y'])), tel(T(5), resp({}))),
  'tool-name-missing': L(head(), tel(T(1), tool(undefined)), tel(T(2), tool(true)), tel(T(3), tool(''))),
  'duplicate-keys': L(head(), tel(T(1), resp('m')).replace('"model":"m"', '"model":"first","model":"second"'), rec(T(2))),
  'nan-durations': L(head(), tel(T(1), tool('t', { duration_ms: undefined })), tel(T(2), resp('m', { duration_ms: 'x' })), tel(T(3), resp('m'))),
  'strings-then-sum': L(head(), tel(T(1), resp('a', { duration_ms: 'x' })), tel(T(2), resp('b'))),
  'object-values': L(head(), tel(T(1), resp('m', { input_token_count: { a: 1 }, output_token_count: [1, [2, 3], null], cached_content_token_count: true, thoughts_token_count: null }))),
  'non-system-telemetry': L(head(), JSON.stringify({ sessionId: SID, timestamp: T(1), type: 'user', subtype: 'ui_telemetry', systemPayload: { uiEvent: resp('m') } }), rec(T(2))),
  'payload-array': L(head(), JSON.stringify({ sessionId: SID, timestamp: T(1), type: 'system', subtype: 'ui_telemetry', systemPayload: [resp('m')] })),
  'nested-session-id': L(head({ sessionId: { a: [1, 'x'], '2': true, '1': null } }), tel(T(1), resp('m'))),
  'whitespace-only-tail': L(head(), tel(T(1), resp('m'))) + '   \n\n\t\n',
};
const invalid = {
  'invalid-utf8': Buffer.concat([Buffer.from(L(head({ cwd: '/srv/a@' })).replace('@', '\\u00e9') ), Buffer.from(tel(T(1), resp('m@')).replace('m@', 'm')), Buffer.from([0x0a]),
    Buffer.from(tel(T(2), resp('BAD')).split('BAD')[0]), Buffer.from([0x6d, 0xff, 0xc3]), Buffer.from(tel(T(2), resp('BAD')).split('BAD')[1]), Buffer.from('\n')]),
  'nul-bytes': Buffer.concat([Buffer.from(L(head(), tel(T(1), resp('m')))), Buffer.from([0, 0, 0x0a]), Buffer.from(rec(T(2))), Buffer.from([0]), Buffer.from('\n')]),
};

const dir = path.join(HERE, 'cases');
fs.mkdirSync(dir, { recursive: true });
for (const [name, text] of Object.entries(cases)) fs.writeFileSync(path.join(dir, name + '.jsonl'), text);
for (const [name, buf] of Object.entries(invalid)) fs.writeFileSync(path.join(dir, name + '.jsonl'), buf);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-golden-'));
process.env.QWEN_HOME = tmp;
delete process.env.QWEN_RUNTIME_DIR;
const { loadQwenInternals } = await import(pathToFileURL(path.join(HERE, '../../realqwen/qwen-internals.mjs')).href);
const q = await loadQwenInternals(pkgDir);
const svc = new q.SessionService('/srv/x');
const out = [];
for (const name of [...Object.keys(cases), ...Object.keys(invalid)].sort()) {
  const prepared = await svc.prepareUsageSalvageBestEffort(path.join(dir, name + '.jsonl'));
  out.push(JSON.stringify({ case: name, record: prepared ? prepared.record : null }));
}
fs.writeFileSync(path.join(HERE, 'golden.jsonl'), out.join('\n') + '\n');
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`wrote ${out.length} cases (Qwen ${q.version})`);
