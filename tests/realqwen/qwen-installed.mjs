// qwen-installed.mjs PKG_DIR VERSION: does the Qwen Code install at PKG_DIR load? Exit 0 when
// its package.json says VERSION, its CLI prints VERSION (`cli.js --version`: the bundle and what
// it imports load) and, in a release split into chunks (0.21 and later), qwen-internals.mjs finds
// and imports every function the harness uses (a dependency missing from node_modules is an
// ERR_MODULE_NOT_FOUND here). Run with the node that will run the harness, under net-guard.cjs.
// tests/integration/qwen-npm.sh runs it once after an install, before it marks the install
// usable.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadQwenInternals } from './qwen-internals.mjs';

const [pkgDir, want] = process.argv.slice(2);
const bad = (why) => {
  console.error(`qwen-installed: ${pkgDir}: ${why}`);
  process.exit(1);
};
if (!pkgDir || !want) bad('usage: qwen-installed.mjs PKG_DIR VERSION');
let pkg;
try {
  pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
} catch (e) {
  bad(`no package.json (${e.message})`);
}
if (pkg.version !== want) bad(`package.json says ${pkg.version}, not ${want}`);
const cli = spawnSync(process.execPath, [path.join(pkgDir, 'cli.js'), '--version'],
  { encoding: 'utf8', timeout: 120000, stdio: ['ignore', 'pipe', 'pipe'] });
if (cli.status !== 0 || cli.stdout.trim() !== want)
  bad(`cli.js --version: status ${cli.status}, printed ${JSON.stringify(cli.stdout.trim())}: ${cli.stderr}`);
if (fs.existsSync(path.join(pkgDir, 'chunks'))) {
  const q = await loadQwenInternals(pkgDir);
  if (q.missing.length) bad(`the chunks do not export ${q.missing.join(', ')}`);
}
console.log(`qwen-installed: ${pkgDir}: Qwen Code ${want} loads`);
