/**
 * The package as it is deployed: `lib/` compiled by `tsc -p tsconfig.build.json` (what
 * `npm run build` and the Dockerfile's build stage run; here and in `npm run build` with
 * `--noCheck`: the type check is `npm run typecheck`'s), next to a copy of `package.json`
 * and a `node_modules` link to the project's own, in a folder of its own — never the
 * project's `lib/` itself: a copy of it when it is current (as right after `npm ci`), else
 * compiled. Made once per state of the sources and kept in the system's temp folder, so
 * every test file (and every later run) that needs the built code shares one build.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  copyFile,
  cp,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out;
}

/** What the build depends on: the sources, the compiler settings, package.json, and where we are. */
export async function sourceHash(): Promise<string> {
  const hash = createHash('sha256').update(ROOT);
  const files = [
    ...(await filesUnder(join(ROOT, 'src'))),
    join(ROOT, 'tsconfig.json'),
    join(ROOT, 'tsconfig.build.json'),
    join(ROOT, 'package.json'),
  ].sort();
  for (const file of files) {
    hash
      .update(relative(ROOT, file))
      .update('\0')
      .update(await readFile(file))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

let built: Promise<string> | undefined;

/** The folder holding `package.json`, `lib/` and `node_modules` (a link), built when needed. */
export function builtPackage(): Promise<string> {
  built ??= (async () =>
    madeOnce(
      join(tmpdir(), `epicflow-built-${process.getuid?.() ?? 'any'}`),
      await sourceHash(),
      compile,
    ))();
  return built;
}

/**
 * The folder `<cache>/<key>`, made by `make` (into a scratch folder, renamed when done)
 * unless a complete one is there. One cache per user: another user's (root's, on a machine
 * that ran the suite as root before) is not ours to write. Test files in other workers that
 * need it meanwhile wait for that build instead of making it again. Folders of the cache
 * unused for a day are removed.
 */
export async function madeOnce(
  cache: string,
  key: string,
  make: (scratch: string) => Promise<void>,
): Promise<string> {
  const dir = join(cache, key);
  await mkdir(cache, { recursive: true });
  const lock = `${dir}.lock`;
  for (;;) {
    if (existsSync(join(dir, '.complete'))) {
      // Marks it as used, so `prune` keeps it.
      await utimes(dir, new Date(), new Date());
      return dir;
    }
    const mine = await mkdir(lock).then(
      () => true,
      (e: unknown) => {
        // Held by another build; anything else would never clear: said, not waited on.
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw e;
      },
    );
    if (mine) break;
    const since = (await stat(lock).catch(() => undefined))?.mtimeMs;
    // A build that left its lock behind (its process was killed) is taken over.
    if (since !== undefined && Date.now() - since > STALE_LOCK_MS) {
      await rm(lock, { recursive: true, force: true });
    } else {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    if (!existsSync(join(dir, '.complete'))) {
      const scratch = `${dir}.${process.pid}.${Date.now()}`;
      await rm(dir, { recursive: true, force: true });
      await mkdir(scratch, { recursive: true });
      await make(scratch);
      await writeFile(join(scratch, '.complete'), '');
      await rename(scratch, dir);
    }
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
  await prune(cache, dir);
  return dir;
}

/** A build's lock older than this belongs to a process that is gone. */
const STALE_LOCK_MS = 5 * 60 * 1000;

/**
 * Whether the project's `lib/` is what `tsc -p tsconfig.build.json` makes of the sources as
 * they are now (as right after `npm ci`, whose `prepare` builds it): every source has its
 * output, every output its source, and no source or compiler setting is newer than the
 * oldest output. A `lib/` of an edited, renamed or deleted source is not.
 */
async function libIsCurrent(): Promise<boolean> {
  const lib = join(ROOT, 'lib');
  if (!existsSync(lib)) return false;
  const stem = (base: string, file: string, ext: string): string | null =>
    file.endsWith(ext) ? relative(base, file).slice(0, -ext.length) : null;
  const sources = (await filesUnder(join(ROOT, 'src')))
    .filter((f) => !f.endsWith('.d.ts'))
    .map((f) => stem(join(ROOT, 'src'), f, '.ts'))
    .filter((f): f is string => f !== null);
  const outputs = (await filesUnder(lib))
    .map((f) => stem(lib, f, '.js'))
    .filter((f): f is string => f !== null);
  if (sources.length !== outputs.length || sources.sort().join('\n') !== outputs.sort().join('\n'))
    return false;
  const mtime = async (f: string): Promise<number> => (await stat(f)).mtimeMs;
  const oldestOutput = Math.min(
    ...(await Promise.all(outputs.map((o) => mtime(join(lib, `${o}.js`))))),
  );
  const inputs = [
    ...sources.map((s) => join(ROOT, 'src', `${s}.ts`)),
    join(ROOT, 'tsconfig.json'),
    join(ROOT, 'tsconfig.build.json'),
    join(ROOT, 'package.json'),
  ];
  const newestInput = Math.max(...(await Promise.all(inputs.map(mtime))));
  return newestInput <= oldestOutput;
}

async function compile(scratch: string): Promise<void> {
  if (await libIsCurrent()) {
    // The same compiler's output for the same sources: a copy, so no test touches `lib/`.
    await cp(join(ROOT, 'lib'), join(scratch, 'lib'), { recursive: true });
  } else {
    await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        'tsconfig.build.json',
        '--noCheck',
        '--outDir',
        join(scratch, 'lib'),
      ],
      { cwd: ROOT },
    );
  }
  await copyFile(join(ROOT, 'package.json'), join(scratch, 'package.json'));
  await symlink(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
}

/** Builds not used for a day are removed (a build in use by a running test is newer). */
async function prune(cache: string, keep: string): Promise<void> {
  const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
  for (const name of await readdir(cache)) {
    const path = join(cache, name);
    if (path === keep) continue;
    const mtime = (await stat(path).catch(() => undefined))?.mtimeMs ?? Date.now();
    if (mtime < dayAgo) await rm(path, { recursive: true, force: true });
  }
}
