import { describe, expect, it } from '@jest/globals';
import { detectPackages } from '../../src/core/init/index.js';
import { detectChecks } from '../../src/core/init/detect.js';
import { cargoWorkspace, goWorkUses } from '../../src/core/init/workspaces.js';
import { checkScope, epicScope, storyScope, touchedPackages } from '../../src/core/packages.js';

const API = { path: 'packages/api', gates: ['npm test'] };
const WEB = { path: 'packages/web', setup: 'make deps', gates: ['npm test', 'npm run lint'] };
const CONFIG = { setup: 'npm ci', gates: ['npm run typecheck'], packages: [API, WEB] };

describe('touchedPackages', () => {
  it('takes a package an owned path lies in, or that lies in an owned path', () => {
    expect(touchedPackages([API, WEB], ['packages/api/src/a.ts'])).toEqual([API]);
    expect(touchedPackages([API, WEB], ['packages'])).toEqual([API, WEB]);
    expect(touchedPackages([API, WEB], ['.'])).toEqual([API, WEB]);
    expect(touchedPackages([API, WEB], ['./packages/web/'])).toEqual([WEB]);
  });

  it('leaves out a package only a name prefix shares', () => {
    expect(touchedPackages([API], ['packages/api-client/x.ts', 'README.md'])).toEqual([]);
  });
});

describe('check scopes', () => {
  it("runs the root's checks, then each touched package's in its folder, named with it", () => {
    const scope = storyScope(CONFIG, ['packages/web/x.ts']);
    expect(scope.packages).toEqual(['packages/web']);
    expect(scope.setup.map((s) => [s.dir, s.command])).toEqual([
      ['.', 'npm ci'],
      ['packages/web', 'make deps'],
    ]);
    expect(scope.gates.map((g) => g.label)).toEqual([
      'npm run typecheck',
      'packages/web: npm test',
      'packages/web: npm run lint',
    ]);
  });

  it("the epic's scope covers every package its stories touch", () => {
    const epic = epicScope(CONFIG, [{ owns: ['packages/api/a'] }, { owns: ['docs/x.md'] }]);
    expect(epic.packages).toEqual(['packages/api']);
    expect(epic.key).toBe(storyScope(CONFIG, ['packages/api']).key);
    expect(epic.key).not.toBe(storyScope(CONFIG, ['packages']).key);
  });

  it('without packages keeps the key of the root checks alone', () => {
    expect(checkScope({ gates: ['t'], setup: 's' }, []).key).toBe(
      JSON.stringify({ gates: ['t'], setup: 's' }),
    );
  });
});

describe('detectPackages', () => {
  const texts = (entries: Record<string, string>): Map<string, string> =>
    new Map(Object.entries(entries));
  const pkg = (test?: string): string =>
    JSON.stringify({ name: 'x', ...(test === undefined ? {} : { scripts: { test } }) });

  it('finds the members of an npm workspace; the root installs them', () => {
    const found = detectPackages(
      ['package.json', 'pnpm-lock.yaml', 'libs/a/package.json', 'libs/b/package.json'],
      texts({
        'package.json': JSON.stringify({ workspaces: { packages: ['libs/*', '!libs/b'] } }),
        'libs/a/package.json': pkg('node --test'),
        'libs/b/package.json': pkg('node --test'),
      }),
    );
    expect(found.packages).toEqual([
      expect.objectContaining({
        path: 'libs/a',
        workspace: true,
        from: 'package.json workspaces',
        setup: undefined,
        gates: [{ command: 'pnpm test', from: 'libs/a/package.json scripts.test' }],
      }),
    ]);
  });

  it("a root whose test script runs every member's: members keep no test gate of their own, said once", () => {
    const workspace = (rootTest: string) =>
      detectPackages(
        [
          'package.json',
          'pnpm-lock.yaml',
          'libs/a/package.json',
          'libs/b/package.json',
          'libs/b/pyproject.toml',
        ],
        texts({
          'package.json': JSON.stringify({ workspaces: ['libs/*'], scripts: { test: rootTest } }),
          'libs/a/package.json': pkg('node --test'),
          'libs/b/package.json': pkg('node --test'),
          'libs/b/pyproject.toml': '[project]\nname = "b"\n\n[tool.pytest.ini_options]\n',
        }),
      );
    const recursive = workspace('tsc -b && pnpm -r test');
    // a has nothing else to check: no package; b keeps its Python checks.
    expect(recursive.packages.map((p) => [p.path, p.gates.map((g) => g.command)])).toEqual([
      ['libs/b', ['python3 -m pytest']],
    ]);
    expect(recursive.warnings).toEqual([
      'the root\'s test script runs the tests of every member of its workspace ("pnpm -r test"): a member\'s test script is no gate of its own (2 members), so no story runs them twice',
    ]);
    // Some members only, or not the tests: each member keeps its own.
    for (const rootTest of ['pnpm --filter a -r test', 'pnpm -r build', 'vitest run']) {
      const found = workspace(rootTest);
      expect(found.packages.map((p) => p.path)).toEqual(['libs/a', 'libs/b']);
      expect(found.warnings).toEqual([]);
    }
  });

  it.each([
    'pnpm -r test',
    'pnpm --recursive run test',
    'pnpm test -r',
    'npm test --workspaces --if-present',
    'npm run test -ws',
    'yarn workspaces run test',
    'yarn workspaces foreach -A --topological run test',
    'npx lerna run test --stream',
    'turbo run test',
    'turbo test --filter=...',
    'nx run-many -t test',
    'nx run-many --targets=lint,test',
  ])("knows %s for running every member's tests", (rootTest) => {
    const members = (test: string) =>
      detectPackages(
        ['package.json', 'package-lock.json', 'libs/a/package.json'],
        texts({
          'package.json': JSON.stringify({ workspaces: ['libs/*'], scripts: { test } }),
          'libs/a/package.json': pkg('node --test'),
        }),
      ).packages.length;
    expect(members(rootTest)).toBe(rootTest.includes('--filter') ? 1 : 0);
  });

  it("reads pnpm-workspace.yaml's packages", () => {
    const found = detectPackages(
      ['package.json', 'pnpm-workspace.yaml', 'pnpm-lock.yaml', 'tools/cli/package.json'],
      texts({
        'package.json': pkg(),
        'pnpm-workspace.yaml': "packages:\n  - 'tools/**'\n",
        'tools/cli/package.json': pkg('vitest'),
      }),
    );
    expect(found.packages.map((p) => [p.path, p.from, p.gates[0]?.command])).toEqual([
      ['tools/cli', 'pnpm-workspace.yaml', 'pnpm test'],
    ]);
  });

  it('finds a Go module and a Python project in their own folders, with their own setup', () => {
    const found = detectPackages(
      [
        'services/api/go.mod',
        'ml/pyproject.toml',
        'ml/uv.lock',
        'test/fixtures/go.mod',
        'deep/er/down/go.mod',
        'node_modules/x/package.json',
      ],
      texts({
        'services/api/go.mod': 'module x\n\ngo 1.21\n',
        'ml/pyproject.toml': '[project]\nname = "ml"\n\n[tool.pytest.ini_options]\n',
        'ml/uv.lock': '',
        'test/fixtures/go.mod': 'module y\n',
        'deep/er/down/go.mod': 'module z\n',
      }),
    );
    expect(found.packages.map((p) => [p.path, p.from])).toEqual([
      ['ml', 'its own pyproject.toml'],
      ['services/api', 'its own go.mod'],
    ]);
    expect(found.packages[0]).toMatchObject({ setup: 'uv sync --locked', workspace: false });
    expect(found.packages[1]?.gates.map((g) => g.from)).toContain('services/api/go.mod');
    expect(found.toolchains).toEqual(expect.arrayContaining(['go', 'uv']));
  });

  it('names the package in its warnings, and leaves out a package without gates', () => {
    const found = detectPackages(
      ['apps/site/package.json'],
      texts({ 'apps/site/package.json': pkg() }),
    );
    expect(found.packages).toEqual([]);
    expect(
      found.warnings.some((w) => w.startsWith('apps/site: package.json has no test script')),
    ).toBe(true);
  });
});

describe('Go and Cargo workspaces', () => {
  const texts = (entries: Record<string, string>): Map<string, string> =>
    new Map(Object.entries(entries));

  it("reads go.work's use directives: single, in a block, quoted, commented; never the root or outside", () => {
    const work = [
      'go 1.21',
      '',
      'use ./tools/gen // the generator',
      'use (',
      '\t./services/api',
      '\t"./libs/with space"',
      '\t.',
      '\t../elsewhere',
      '\t// ./commented/out',
      ')',
      'use (./one/liner)',
      'replace example.com/x => ./vendor/x',
      '',
    ].join('\n');
    expect(goWorkUses(work)).toEqual(['tools/gen', 'services/api', 'libs/with space', 'one/liner']);
  });

  it("reads Cargo.toml's [workspace] members and exclude, and whether the root is a crate", () => {
    const cargo = [
      '[workspace]',
      'resolver = "2"',
      'members = [',
      '  "crates/*", # every crate',
      "  'tools/cli',",
      ']',
      'exclude = ["crates/old"]',
      '',
      '[workspace.dependencies]',
      'members = ["not/this"]',
      '',
    ].join('\n');
    expect(cargoWorkspace(cargo)).toEqual({
      members: ['crates/*', 'tools/cli'],
      exclude: ['crates/old'],
      rootPackage: false,
    });
    expect(cargoWorkspace(`[package]\nname = "app"\n\n${cargo}`)?.rootPackage).toBe(true);
    expect(cargoWorkspace('[package]\nname = "app"\n')).toBeUndefined();
  });

  it('makes each module a go.work uses a package, at any depth, with go build, vet and test in its folder', () => {
    const found = detectPackages(
      ['go.work', 'platform/core/auth/go.mod', 'services/api/go.mod', 'unused/deep/mod/go.mod'],
      texts({
        'go.work': 'go 1.21\n\nuse (\n\t./platform/core/auth\n\t./services/api\n)\n',
        'platform/core/auth/go.mod': 'module example.com/auth\n\ngo 1.21\n',
        'services/api/go.mod':
          'module example.com/api\n\ngo 1.21\n\nrequire example.com/auth v0.0.0\n',
        'unused/deep/mod/go.mod': 'module example.com/unused\n',
      }),
    );
    expect(found.packages.map((p) => [p.path, p.from, p.setup])).toEqual([
      ['platform/core/auth', 'go.work use', undefined],
      ['services/api', 'go.work use', 'go mod download'],
    ]);
    expect(found.packages[0]?.gates.map((g) => [g.command, g.from])).toEqual([
      ['go build ./...', 'platform/core/auth/go.mod'],
      ['go vet ./...', 'platform/core/auth/go.mod'],
      ['go test ./...', 'platform/core/auth/go.mod'],
    ]);
    expect(found.toolchains).toEqual(['go']);
  });

  it("makes each member crate of a Cargo workspace a package, tested in its folder with the root's lock and lints", () => {
    const found = detectPackages(
      [
        'Cargo.toml',
        'Cargo.lock',
        'crates/core/Cargo.toml',
        'crates/old/Cargo.toml',
        'crates/notes/README.md',
        'tools/deep/cli/Cargo.toml',
      ],
      texts({
        'Cargo.toml': [
          '[workspace]',
          'members = ["crates/*", "tools/deep/cli"]',
          'exclude = ["crates/old"]',
          '',
          '[workspace.lints.clippy]',
          'pedantic = "warn"',
          '',
        ].join('\n'),
        'crates/core/Cargo.toml': '[package]\nname = "core"\n',
        'crates/old/Cargo.toml': '[package]\nname = "old"\n',
        'tools/deep/cli/Cargo.toml': '[package]\nname = "cli"\n',
      }),
    );
    // crates/old is excluded from the workspace; two levels down outside apps/, packages/ or
    // services/, it is no package of its own either.
    expect(found.packages.map((p) => [p.path, p.from, p.workspace, p.setup])).toEqual([
      ['crates/core', 'Cargo.toml [workspace] members', true, undefined],
      ['tools/deep/cli', 'Cargo.toml [workspace] members', true, undefined],
    ]);
    expect(found.packages[0]?.gates.map((g) => [g.command, g.from])).toEqual([
      ['cargo test --locked', 'crates/core/Cargo.toml'],
      [
        'cargo clippy --locked --all-targets -- -D warnings',
        "the root's Cargo.toml [workspace.lints.clippy]",
      ],
    ]);
  });

  it("a virtual Cargo manifest's root fetches for the workspace and leaves the tests to its members", () => {
    const root = detectChecks({
      paths: ['Cargo.toml', 'Cargo.lock'],
      texts: texts({ 'Cargo.toml': '[workspace]\nmembers = ["crates/*"]\n', 'Cargo.lock': '' }),
    });
    expect(root).toMatchObject({ setup: 'cargo fetch --locked', gates: [], toolchains: ['rust'] });
    // A root that is a crate itself keeps its own tests.
    const crate = detectChecks({
      paths: ['Cargo.toml'],
      texts: texts({ 'Cargo.toml': '[package]\nname = "app"\n\n[workspace]\nmembers = ["x"]\n' }),
    });
    expect(crate.gates.map((g) => g.command)).toEqual(['cargo test']);
  });

  it('a go.work alone at the root asks for Go, without the warning that no gates were found', () => {
    const root = detectChecks({
      paths: ['go.work'],
      texts: texts({ 'go.work': 'use ./api\n' }),
    });
    expect(root).toMatchObject({ setup: undefined, gates: [], toolchains: ['go'], warnings: [] });
  });
});
