/**
 * A repository whose root is no project, with its app in a folder one level down: the
 * setup and gates found in the only such folder with a package.json run there for every
 * story; with two or more, none is chosen and detection says so.
 */
import { describe, expect, it } from '@jest/globals';
import { parseConfig } from '../../src/core/config/index.js';
import {
  appFolder,
  commandFolder,
  detectionNotes,
  leftToDetection,
  withDetected,
  type DetectionFiles,
} from '../../src/core/init/index.js';

const PKG = JSON.stringify({ name: 'app', scripts: { test: 'jest' } });
const CONFIG = 'executors:\n  - { id: bot, harness: command, command: ["true"] }\n';

function files(entries: Record<string, string>, others: readonly string[] = []): DetectionFiles {
  return {
    paths: [...Object.keys(entries), ...others].sort(),
    texts: new Map(Object.entries(entries)),
  };
}

function detected(text: string, repo: DetectionFiles) {
  return withDetected(parseConfig(text, 'epicflow.yml'), leftToDetection(text), repo);
}

describe('the only folder with a package.json under a root that is no project', () => {
  const repo = files({ 'app/package.json': PKG }, ['README.md', 'app/package-lock.json']);

  it('runs the setup and gates found there, in it, for every story', () => {
    const config = detected(CONFIG, repo);
    expect(config.setup).toBe('cd app && npm ci');
    expect(config.gates).toEqual(['cd app && npm test']);
    // Not a package besides: its gates would run twice.
    expect(config.packages).toBeUndefined();
    expect(detectionNotes(leftToDetection(CONFIG), repo)).toEqual([]);
  });

  it('names where each command came from, inside the folder', () => {
    expect(appFolder(repo.paths, repo.texts).found).toMatchObject({
      dir: 'app',
      setupFrom: [{ command: 'cd app && npm ci', from: 'app/package-lock.json' }],
      gates: [{ command: 'cd app && npm test', from: 'app/package.json scripts.test' }],
    });
  });

  it('keeps a setup the config names, and other packages found', () => {
    const withGo = files({ 'app/package.json': PKG, 'api/go.mod': 'module x\n\ngo 1.19\n' }, [
      'app/package-lock.json',
    ]);
    const config = detected(`${CONFIG}setup: make deps\n`, withGo);
    expect(config.setup).toBe('make deps');
    expect(config.gates).toEqual(['cd app && npm test']);
    expect(config.packages?.map((p) => p.path)).toEqual(['api']);
  });

  it('quotes a folder name the shell would split', () => {
    const spaced = files({ 'my app/package.json': PKG }, ['my app/package-lock.json']);
    expect(detected(CONFIG, spaced).gates).toEqual(["cd 'my app' && npm test"]);
    expect(commandFolder("cd 'my app' && npm ci")).toBe('my app');
  });

  it('a config that names those gates (as init writes them) does not get the folder as a package too', () => {
    const config = detected(`${CONFIG}gates: ['cd app && npm test']\n`, repo);
    expect(config.packages).toBeUndefined();
    const other = detected(`${CONFIG}gates: ['cd app && npm run lint']\n`, repo);
    expect(other.packages).toEqual([{ path: 'app', setup: 'npm ci', gates: ['npm test'] }]);
  });

  it('leaves alone a config that names the gates, or the folder as a package', () => {
    expect(detected(`${CONFIG}gates: [make check]\n`, repo).gates).toEqual(['make check']);
    const asPackage = detected(`${CONFIG}packages:\n  - { path: app, gates: [npm test] }\n`, repo);
    expect(asPackage.gates).toEqual([]);
    expect(asPackage.setup).toBeUndefined();
  });

  it('a root with checks of its own keeps them at the root', () => {
    const rooted = files(
      {
        'pyproject.toml': '[project]\nname = "x"\n\n[tool.pytest.ini_options]\n',
        'app/package.json': PKG,
      },
      ['app/package-lock.json'],
    );
    expect(detected(CONFIG, rooted).gates).toEqual(['python3 -m pytest']);
    expect(appFolder(rooted.paths, rooted.texts)).toEqual({ warnings: [] });
  });

  it('a test or examples folder is no candidate', () => {
    const fixtures = files({ 'app/package.json': PKG, 'examples/package.json': PKG });
    expect(detected(CONFIG, fixtures).gates).toEqual(['cd app && npm test']);
  });
});

describe('two folders with a package.json', () => {
  const repo = files({ 'web/package.json': PKG, 'app/package.json': PKG });

  it('chooses none: each stays a package, and a note says why', () => {
    const config = detected(CONFIG, repo);
    expect(config.gates).toEqual([]);
    expect(config.setup).toBeUndefined();
    expect(config.packages?.map((p) => p.path)).toEqual(['app', 'web']);
    const notes = detectionNotes(leftToDetection(CONFIG), repo);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain('app/, web/');
    expect(notes[0]).toContain('"cd app && npm test"');
  });

  it('says nothing when the config names its gates', () => {
    expect(detectionNotes(leftToDetection(`${CONFIG}gates: []\n`), repo)).toEqual([]);
  });
});

describe('commandFolder', () => {
  it('the folder a command changes into first, else the root', () => {
    expect(commandFolder('cd app && npm ci')).toBe('app');
    expect(commandFolder('cd ./web/ && pnpm install')).toBe('web');
    expect(commandFolder('npm ci')).toBe('.');
    expect(commandFolder('npm ci && cd app && npm ci')).toBe('.');
  });
});
