#!/usr/bin/env node
// dc-undo.mjs — Deep Code's /undo, by its OWN core library (build/packages/core).
//
//   node dc-undo.mjs HOME PROJECT_ROOT ID N MODE
//       Undoes session ID to its N-th undo target (1 = the first user prompt), as the CLI's
//       App.tsx handleUndoRestore does: MODE "code-and-conversation" runs
//       SessionManager.restoreSessionCode (files restored, `git update-ref` moves the session's
//       branch back to the target's checkpointHash) then restoreSessionConversation (the
//       transcript cut before the target); MODE "code" runs only restoreSessionCode (what is left
//       when the conversation restore fails): the kept later prompts then name checkpoints that
//       no ref reaches, only the branch's reflog. Prints "ID branch-moved-to HASH".
//
// HOME holds .deepcode/; PROJECT_ROOT must exist (the restore writes its files).
import os from 'node:os';
import path from 'node:path';
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CORE = path.join(process.env.REALDC_BUILD || path.join(HERE, 'build'), 'packages/core/dist/index.js');

const [home, root, id, nth, mode] = process.argv.slice(2);
if (!home || !root || !id || !(Number(nth) >= 1) || !['code', 'code-and-conversation'].includes(mode)) {
  console.error('usage: dc-undo.mjs HOME PROJECT_ROOT ID N code|code-and-conversation');
  process.exit(2);
}
const HOME = path.resolve(home);
process.env.HOME = HOME;
os.homedir = () => HOME;
module.syncBuiltinESMExports();

const { SessionManager, createOpenAIClient, resolveCurrentSettings } = await import(pathToFileURL(CORE).href);
const projectRoot = path.resolve(root);
process.chdir(projectRoot);
const m = new SessionManager({
  projectRoot,
  createOpenAIClient: () => createOpenAIClient(projectRoot),
  getResolvedSettings: () => resolveCurrentSettings(projectRoot),
  renderMarkdown: (text) => text,
  nonInteractive: true,
  onAssistantMessage: () => {},
});
try {
  const targets = m.listUndoTargets(id);
  const t = targets[Number(nth) - 1];
  if (!t || !t.canRestoreCode) {
    console.error(`${id}: undo target ${nth} of ${targets.length} missing or not restorable`);
    process.exit(1);
  }
  m.restoreSessionCode(id, t.message.id);
  if (mode === 'code-and-conversation') m.restoreSessionConversation(id, t.message.id);
  console.log(`${id} branch-moved-to ${m.getCurrentCheckpointHash(id)}`);
} finally {
  m.dispose();
}
