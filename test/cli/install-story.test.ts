/**
 * One install story: the README, the docs, the workflow templates and what `epicflow init`
 * writes name the same release — the tag the release script makes for this version (the
 * major tag `v<major>` for `uses:`, `v<version>` for the tarball and the schema) — and
 * nothing tells people to run an `npx epicflow` that no registry serves.
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/program.js';
import { releaseRef, REPOSITORY, schemaUrl } from '../../src/core/init/index.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
};
const major = releaseRef(version);

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(ext) && !f.startsWith('adr'))
    .map((f) => join(dir, f));
}

const DOCS = ['README.md', 'CONTRIBUTING.md', ...filesUnder('docs', '.md')];
const TEMPLATES = [...filesUnder('examples/workflows', '.yml'), 'examples/epicflow.yml'];

describe('the install story', () => {
  it('the release script tags v<version> and moves v<major>', () => {
    const script = readFileSync(join(ROOT, 'scripts/release.mjs'), 'utf8');
    expect(script).toContain('const tag = `v${version}`;');
    expect(script).toContain('const major = `v${semver[1]}`;');
    expect(major).toBe(`v${version.split('.')[0]}`);
  });

  it.each([...DOCS, ...TEMPLATES])('%s names this release', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const [, ref] of text.matchAll(/epicflow\/epicflow@([^\s`'"]+)/g)) {
      expect([major, `v${version}`, 'v<major>', 'v<version>']).toContain(ref);
    }
    for (const [url] of text.matchAll(
      /https:\/\/github\.com\/epicflow\/epicflow\/releases\/download\/\S+?\.tgz/g,
    )) {
      expect(url).toBe(
        `https://github.com/${REPOSITORY}/releases/download/v${version}/epicflow-${version}.tgz`,
      );
    }
    for (const [url] of text.matchAll(/\$schema=(\S+)/g))
      expect(url).toBe(`$schema=${schemaUrl(version)}`);
    expect(text).not.toMatch(/npx epicflow\b/);
    expect(text).not.toMatch(/unpkg\.com/);
  });

  it('the README installs the tarball of this version and uses the major tag', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(
      `npm install -g https://github.com/${REPOSITORY}/releases/download/v${version}/epicflow-${version}.tgz`,
    );
    expect(readme).toContain(`uses: ${REPOSITORY}@${major}`);
  });

  it("init writes the major tag and a $schema at this version's tag, a file the tag carries", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'epicflow-install-'));
    try {
      execFileSync('git', ['init', '-q', '-b', 'main', dir]);
      const code = await main(['init', '--appless', '--dir', dir], {
        stdout: () => undefined,
        stderr: () => undefined,
        readStdin: async () => '',
        cwd: dir,
        env: {},
      });
      expect(code).toBe(0);
      const config = await readFile(join(dir, '.github/epicflow.yml'), 'utf8');
      expect(config).toContain(
        `# yaml-language-server: $schema=https://raw.githubusercontent.com/${REPOSITORY}/v${version}/schema.json\n`,
      );
      for (const wf of ['epicflow-story.yml', 'epicflow-orchestrate.yml']) {
        const text = await readFile(join(dir, '.github/workflows', wf), 'utf8');
        const refs = [...text.matchAll(/epicflow\/epicflow@(\S+)/g)].map((m) => m[1]);
        expect(refs.length).toBeGreaterThan(0);
        expect([...new Set(refs)]).toEqual([major]);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // The release tag is the merged commit plus dist/: it carries what the branch tracks.
    expect(execFileSync('git', ['ls-files', 'schema.json'], { cwd: ROOT, encoding: 'utf8' })).toBe(
      'schema.json\n',
    );
  });
});
