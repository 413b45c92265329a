/**
 * The release pull request's version step (`npm run release:version` = `changeset version`)
 * with this repository's `.changeset/` (its config and pending changesets), in a copy: the
 * version it bumps to, the CHANGELOG entry it writes, the changesets it consumes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-changesets-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The bump a set of changesets asks for, as semver does it. */
function bumped(version: string, kinds: readonly string[]): string {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
  if (kinds.includes('major')) return `${major + 1}.0.0`;
  if (kinds.includes('minor')) return `${major}.${minor + 1}.0`;
  if (kinds.includes('patch')) return `${major}.${minor}.${patch + 1}`;
  return version;
}

describe("changeset version with this repository's changesets", () => {
  it('bumps package.json semantically, writes the CHANGELOG entry and consumes the changesets', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    await cp(join(ROOT, '.changeset'), join(dir, '.changeset'), { recursive: true });
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name: pkg.name, version: pkg.version }, null, 2),
    );
    await cp(join(ROOT, 'CHANGELOG.md'), join(dir, 'CHANGELOG.md'));
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir, env: gitEnv });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'add', '-A'], {
      cwd: dir,
      env: gitEnv,
    });
    execFileSync(
      'git',
      ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'x'],
      { cwd: dir, env: gitEnv },
    );

    const pending = (await readdir(join(dir, '.changeset'))).filter(
      (f) => f.endsWith('.md') && f !== 'README.md',
    );
    const kinds: string[] = [];
    for (const f of pending) {
      const text = await readFile(join(dir, '.changeset', f), 'utf8');
      const header = /^---\n([\s\S]*?)\n---/.exec(text)?.[1] ?? '';
      // Only this package, by name.
      expect(header.split('\n').map((l) => l.replace(/['"]/g, '').split(':')[0]?.trim())).toEqual([
        pkg.name,
      ]);
      kinds.push(/:\s*['"]?(major|minor|patch)/.exec(header)?.[1] ?? '?');
    }
    expect(kinds.every((k) => ['major', 'minor', 'patch'].includes(k))).toBe(true);

    execFileSync(process.execPath, [join(ROOT, 'node_modules/@changesets/cli/bin.js'), 'version'], {
      cwd: dir,
      env: gitEnv,
    });
    const next = bumped(pkg.version, kinds);
    const after = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(after.version).toBe(next);
    const changelog = await readFile(join(dir, 'CHANGELOG.md'), 'utf8');
    if (pending.length > 0) {
      expect(changelog).toContain(`## ${next}\n`);
      expect(
        (await readdir(join(dir, '.changeset'))).filter(
          (f) => f.endsWith('.md') && f !== 'README.md',
        ),
      ).toEqual([]);
    }
    expect(changelog.startsWith('# epicflow\n')).toBe(true);
  });
});
