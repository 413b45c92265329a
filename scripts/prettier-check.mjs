// `node scripts/prettier-check.mjs`: `prettier --check .` with a cache every clone on the machine
// shares (docs/testing.md, "The checks' caches").
//
// Prettier's own cache cannot be shared: it hashes each file's absolute path into the options it
// keys its entries by. This one keys a file that passed by what decides prettier's answer, and
// nothing else: prettier's version, the file's path in the repository (which picks its parser and
// its config overrides), the options resolved for it, and its content. A file whose key a run saw
// pass is not formatted again; any other is. The files are those `prettier --check .` checks:
// git's tracked and untracked files less the ignored ones (`.gitignore`, `.prettierignore`),
// those prettier has a parser for.
// `EPICFLOW_CHECKS_CACHE=off` checks every file.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as prettier from 'prettier';
import { root, sharedFolder } from './cached-check.mjs';

const IGNORE = ['.gitignore', '.prettierignore'].map((f) => join(root, f));

/** The repository's files, relative to its root, as `git ls-files` lists them (not the ignored). */
function repositoryFiles() {
  const r = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`git ls-files failed: ${r.stderr || r.error?.message}`);
  return [...new Set(r.stdout.split('\0').filter((f) => f !== ''))].sort();
}

/** The keys of files that passed, as kept in `file`; an empty set when there is none to read. */
function readKept(file) {
  try {
    const keys = JSON.parse(readFileSync(file, 'utf8'));
    return new Set(Array.isArray(keys) ? keys : []);
  } catch {
    return new Set();
  }
}

/** Writes `keys` to `file` whole, then in its place. */
function keep(file, keys) {
  mkdirSync(join(file, '..'), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify([...keys].sort()));
  renameSync(temp, file);
}

async function main() {
  const useCache = process.env['EPICFLOW_CHECKS_CACHE'] !== 'off';
  const cacheFile = join(sharedFolder(), 'prettier-passed.json');
  const kept = useCache ? readKept(cacheFile) : new Set();
  const passed = new Set();
  const unformatted = [];
  let errors = 0;
  let files = 0;
  let unchanged = 0;
  for (const path of repositoryFiles()) {
    const absolute = join(root, path);
    if (!existsSync(absolute)) continue; // tracked, deleted in the working tree
    const info = await prettier.getFileInfo(absolute, { ignorePath: IGNORE });
    if (info.ignored || info.inferredParser === null) continue;
    files += 1;
    const options = (await prettier.resolveConfig(absolute, { editorconfig: true })) ?? {};
    const content = readFileSync(absolute, 'utf8');
    const key = createHash('sha256')
      .update(JSON.stringify([prettier.version, path, options, content]))
      .digest('hex');
    if (kept.has(key)) {
      unchanged += 1;
      passed.add(key);
      continue;
    }
    try {
      if (await prettier.check(content, { ...options, filepath: absolute })) passed.add(key);
      else unformatted.push(path);
    } catch (e) {
      errors += 1;
      process.stderr.write(`[error] ${path}: ${e instanceof Error ? e.message : String(e)}\n`);
    }
  }
  if (useCache) {
    try {
      keep(cacheFile, passed);
    } catch (e) {
      // The check's answer stands; only the next run's head start is lost.
      process.stderr.write(`prettier-check: cache not kept in ${cacheFile}: ${e.message}\n`);
    }
  }
  for (const path of unformatted) process.stderr.write(`[warn] ${path}\n`);
  if (unformatted.length > 0) {
    const which = unformatted.length === 1 ? 'the above file' : `${unformatted.length} files`;
    process.stderr.write(
      `[warn] Code style issues found in ${which}. Run Prettier with --write to fix.\n`,
    );
  }
  const counted = `${files} files, ${unchanged} of them as a passing run left them`;
  if (errors > 0 || unformatted.length > 0) {
    process.stderr.write(`[warn] Checked ${counted}.\n`);
    return errors > 0 ? 2 : 1;
  }
  process.stdout.write(`All matched files use Prettier code style! (${counted})\n`);
  return 0;
}

process.exit(await main());
