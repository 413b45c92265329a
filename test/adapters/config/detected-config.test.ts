/**
 * What a job on GitHub detects when its config leaves gates and packages out: the same
 * as the local commands, read from git's objects of the commit it works on, never from
 * a work tree or through a link.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/adapters/config/load-config.js';
import { Git } from '../../../src/adapters/git/index.js';
import { parseConfig } from '../../../src/core/config/index.js';
import { leftToDetection } from '../../../src/core/init/index.js';
import { configAt } from '../../../src/jobs/github/job-shell.js';
import { IDENTITY, makeRepo, type Fixture } from '../git/repo-fixture.js';

let repo: Fixture | undefined;
const outside: string[] = [];
afterEach(() => {
  repo?.cleanup();
  for (const dir of outside.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const CONFIG = 'executors:\n  - { id: bot, harness: command, command: ["true"] }\n';
const PYPROJECT = '[project]\nname = "shop"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n';

/** The config a job runs with on `commit` of the fixture, given the config's text. */
async function jobConfig(text: string, commit: string) {
  const git = await Git.open(repo?.dir ?? '', IDENTITY);
  return configAt(parseConfig(text, 'epicflow.yml'), leftToDetection(text), git, commit);
}

describe('a job detects what its config leaves out, on its commit', () => {
  it('finds the gates and packages the local commands find in the same files', async () => {
    repo = makeRepo({
      'epicflow.yml': CONFIG,
      'pyproject.toml': PYPROJECT,
      'services/api/go.mod': 'module example.com/api\n\ngo 1.19\n',
      'services/api/main.go': 'package main\n\nfunc main() {}\n',
    });
    const head = repo.git('rev-parse', 'HEAD').trim();
    const config = await jobConfig(CONFIG, head);
    expect(config.gates).toEqual(['python3 -m pytest']);
    expect(config.packages).toEqual([
      { path: 'services/api', gates: ['go build ./...', 'go vet ./...', 'go test ./...'] },
    ]);
    const local = await loadConfig({ repoDir: repo.dir });
    expect(local.config).toEqual(config);
  });

  it('reads the commit, not the work tree', async () => {
    repo = makeRepo({ 'epicflow.yml': CONFIG, 'pyproject.toml': PYPROJECT });
    const head = repo.git('rev-parse', 'HEAD').trim();
    unlinkSync(join(repo.dir, 'pyproject.toml'));
    writeFileSync(join(repo.dir, 'go.mod'), 'module example.com/x\n\ngo 1.19\n');
    expect((await jobConfig(CONFIG, head)).gates).toEqual(['python3 -m pytest']);
  });

  it('never follows a link: a pyproject.toml that links outside counts for nothing', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'epicflow-outside-'));
    outside.push(elsewhere);
    writeFileSync(join(elsewhere, 'pyproject.toml'), PYPROJECT);
    repo = makeRepo({ 'epicflow.yml': CONFIG, 'README.md': '# shop\n' });
    symlinkSync(join(elsewhere, 'pyproject.toml'), join(repo.dir, 'pyproject.toml'));
    const head = repo.commitAll('a link');
    // The user's own tree locally: the link is read as the file it names.
    expect((await loadConfig({ repoDir: repo.dir })).config.gates).toEqual(['python3 -m pytest']);
    const config = await jobConfig(CONFIG, head);
    expect(config.gates).toEqual([]);
    expect(config.setup).toBeUndefined();
  });

  it('keeps what the config says: gates: [] and packages: [] are none', async () => {
    repo = makeRepo({
      'epicflow.yml': CONFIG,
      'pyproject.toml': PYPROJECT,
      'services/api/go.mod': 'module example.com/api\n\ngo 1.19\n',
    });
    const head = repo.git('rev-parse', 'HEAD').trim();
    const text = `${CONFIG}gates: []\npackages: []\n`;
    const config = await jobConfig(text, head);
    expect(config.gates).toEqual([]);
    expect(config.packages ?? []).toEqual([]);
  });
});
