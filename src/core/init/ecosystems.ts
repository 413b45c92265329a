/**
 * Setup and gates of the repositories that are not Node packages, read from their own
 * files: Python (uv, poetry, pdm, hatch, pip with `requirements*.txt` or a bare
 * pyproject), Go (`go.mod`) and Rust (`Cargo.toml`). Each command names the file it came
 * from. Pure: the texts come in from the caller.
 */
import { cargoWorkspace } from './workspaces.js';

/** A command `init` writes, and where in the repository it came from. */
export interface Sourced {
  readonly command: string;
  readonly from: string;
}

/** What one ecosystem asks for. */
interface EcosystemFindings {
  readonly setup: readonly Sourced[];
  readonly gates: readonly Sourced[];
  /** What the Actions workflow must set up for the gates (`WORKFLOW_TOOLCHAINS`). */
  readonly toolchains: readonly Toolchain[];
  readonly warnings: readonly string[];
}

/** A toolchain an Actions runner has to be given before the story runs. */
export type Toolchain =
  | 'python'
  | 'uv'
  | 'poetry'
  | 'pdm'
  | 'hatch'
  | 'go'
  | 'rust'
  /** Node's package managers a runner lacks: pnpm, Yarn 2 and later (Yarn 1 is on it), bun. */
  | 'pnpm'
  | 'yarn'
  | 'bun';

/** The files of the root a caller reads for these ecosystems (besides `requirements*.txt`). */
const ECOSYSTEM_FILES = [
  'pyproject.toml',
  'setup.py',
  'setup.cfg',
  'tox.ini',
  'pytest.ini',
  'conftest.py',
  'mypy.ini',
  '.mypy.ini',
  '.flake8',
  'ruff.toml',
  '.ruff.toml',
  'hatch.toml',
  'uv.lock',
  'poetry.lock',
  'pdm.lock',
  '.python-version',
  'go.mod',
  'go.work',
  'Cargo.toml',
  'Cargo.lock',
  'clippy.toml',
  '.clippy.toml',
] as const;

/** `requirements.txt`, `requirements-dev.txt`, `requirements/test.txt` is not (a folder). */
export const REQUIREMENTS = /^requirements[\w.-]*\.txt$/;

/** A TOML table header (`[tool.ruff]`, `[tool.ruff.lint]`) present in the text. */
function hasTable(text: string | undefined, table: string): boolean {
  if (text === undefined) return false;
  const escaped = table.replace(/\./g, '\\.');
  return new RegExp(`^\\s*\\[\\[?${escaped}(?:\\.[^\\]]*)?\\]\\]?\\s*(?:#.*)?$`, 'm').test(text);
}

/** An INI section (`[flake8]`, `[tool:pytest]`) present in the text. */
function hasSection(text: string | undefined, section: string): boolean {
  if (text === undefined) return false;
  const escaped = section.replace(/[.:]/g, (c) => `\\${c}`);
  return new RegExp(`^\\s*\\[${escaped}\\]\\s*$`, 'm').test(text);
}

/** The `[project]` table's `dependencies` list holds at least one entry. */
function projectDependencies(pyproject: string): boolean {
  return /["']/.test(dependencyList(pyproject));
}

type PythonManager = 'uv' | 'poetry' | 'pdm' | 'hatch' | 'pip';

interface PythonTool {
  /** The gate's arguments after the runner (`pytest`, `ruff check .`). */
  readonly args: string;
  /** The first file found that configures it. */
  readonly from: string;
}

/**
 * A test module under `tests/` or `test/` (`tests/test_price.py`, `test/unit/price_test.py`):
 * pytest runs it, whether it is written for pytest or for unittest.
 */
export function isPythonTestFile(path: string): boolean {
  return /^tests?\/(?:[^/]+\/)*(?:test_[^/]*|[^/]*_test)\.py$/.test(path);
}

function pythonTools(
  paths: readonly string[],
  texts: ReadonlyMap<string, string>,
  requirements: readonly string[],
) {
  const py = texts.get('pyproject.toml');
  const cfg = texts.get('setup.cfg');
  const tox = texts.get('tox.ini');
  const first = (checks: readonly [boolean, string][]): string | undefined =>
    checks.find(([ok]) => ok)?.[1];
  const mentions = (name: string): string | undefined =>
    [...(py === undefined ? [] : ['pyproject.toml']), ...requirements].find((f) =>
      new RegExp(`(^|["'\\s])${name}\\b`, 'm').test(texts.get(f) ?? ''),
    );
  const tools: PythonTool[] = [];
  const pytest = first([
    [hasTable(py, 'tool.pytest.ini_options'), 'pyproject.toml [tool.pytest.ini_options]'],
    [texts.has('pytest.ini'), 'pytest.ini'],
    [texts.has('conftest.py'), 'conftest.py'],
    [hasSection(cfg, 'tool:pytest'), 'setup.cfg [tool:pytest]'],
    [hasSection(tox, 'pytest'), 'tox.ini [pytest]'],
  ]);
  const testFile = paths.find(isPythonTestFile);
  const pytestFrom =
    pytest ??
    mentions('pytest') ??
    (testFile === undefined
      ? undefined
      : `${testFile.slice(0, testFile.indexOf('/'))}/ test files`);
  if (pytestFrom !== undefined) tools.push({ args: 'pytest', from: pytestFrom });
  const ruff = first([
    [hasTable(py, 'tool.ruff'), 'pyproject.toml [tool.ruff]'],
    [texts.has('ruff.toml'), 'ruff.toml'],
    [texts.has('.ruff.toml'), '.ruff.toml'],
  ]);
  if (ruff !== undefined) tools.push({ args: 'ruff check .', from: ruff });
  const flake8 = first([
    [texts.has('.flake8'), '.flake8'],
    [hasSection(cfg, 'flake8'), 'setup.cfg [flake8]'],
    [hasSection(tox, 'flake8'), 'tox.ini [flake8]'],
  ]);
  if (flake8 !== undefined) tools.push({ args: 'flake8', from: flake8 });
  const mypy = first([
    [hasTable(py, 'tool.mypy'), 'pyproject.toml [tool.mypy]'],
    [texts.has('mypy.ini'), 'mypy.ini'],
    [texts.has('.mypy.ini'), '.mypy.ini'],
    [hasSection(cfg, 'mypy'), 'setup.cfg [mypy]'],
  ]);
  if (mypy !== undefined) tools.push({ args: 'mypy .', from: mypy });
  return tools;
}

function pythonManager(texts: ReadonlyMap<string, string>): {
  readonly manager: PythonManager;
  readonly from: string;
  readonly locked: boolean;
} {
  const py = texts.get('pyproject.toml');
  if (texts.has('uv.lock')) return { manager: 'uv', from: 'uv.lock', locked: true };
  if (texts.has('poetry.lock')) return { manager: 'poetry', from: 'poetry.lock', locked: true };
  if (texts.has('pdm.lock')) return { manager: 'pdm', from: 'pdm.lock', locked: true };
  if (hasTable(py, 'tool.poetry'))
    return { manager: 'poetry', from: 'pyproject.toml [tool.poetry]', locked: false };
  if (hasTable(py, 'tool.pdm'))
    return { manager: 'pdm', from: 'pyproject.toml [tool.pdm]', locked: false };
  if (hasTable(py, 'tool.uv'))
    return { manager: 'uv', from: 'pyproject.toml [tool.uv]', locked: false };
  if (texts.has('hatch.toml')) return { manager: 'hatch', from: 'hatch.toml', locked: false };
  if (hasTable(py, 'tool.hatch.envs'))
    return { manager: 'hatch', from: 'pyproject.toml [tool.hatch.envs]', locked: false };
  return { manager: 'pip', from: '', locked: false };
}

/**
 * Where a manager keeps its environment, when by default it is in the home (poetry's cache,
 * hatch's data folder): in the tree, so the gates (steps with homes of their own) find what
 * setup installed. uv and pdm make `.venv` in the project by default.
 */
const IN_TREE: Readonly<Record<Exclude<PythonManager, 'pip'>, string>> = {
  uv: '',
  poetry: 'POETRY_VIRTUALENVS_IN_PROJECT=true ',
  pdm: '',
  hatch: 'HATCH_ENV_TYPE_VIRTUAL_PATH=.venv ',
};

/**
 * The virtual environment a pip setup makes in the tree, and the interpreter the gates run
 * it with. In the tree, because setup and each gate run as steps of their own, each with a
 * fresh home (a `pip install` into the user's site would be gone); a virtual environment,
 * because Debian's and Ubuntu's Python refuses `pip install` outside one (PEP 668). It sees
 * the system's packages, so a tool the project does not list (a system pytest) is used, not
 * downloaded — pip too: a venv made with its own pip unpacks one (`ensurepip`, about 4 s of
 * CPU in every checkout setup runs in); the system's pip, run by the venv's interpreter,
 * installs into the venv as well. `ensurepip` only where the system has no pip.
 */
const VENV =
  'python3 -m venv --without-pip --system-site-packages .venv && (.venv/bin/python -m pip --version 2>/dev/null || .venv/bin/python -m ensurepip) >/dev/null';
const VENV_PYTHON = '.venv/bin/python';

/**
 * The hatch environment whose dependencies list pytest (`[tool.hatch.envs.test]` in
 * pyproject.toml, `[envs.test]` in hatch.toml), the names a test run wants first; none:
 * the default environment.
 */
function testEnvironment(texts: ReadonlyMap<string, string>): string | undefined {
  const testing: string[] = [];
  for (const [file, prefix] of [
    ['pyproject.toml', 'tool.hatch.envs.'],
    ['hatch.toml', 'envs.'],
  ] as const) {
    const text = texts.get(file) ?? '';
    const header = new RegExp(`^\\s*\\[${prefix.replace(/\./g, '\\.')}([\\w-]+)\\]\\s*$`, 'gm');
    for (const [, name = ''] of text.matchAll(header)) {
      const body = tableBody(text, `${prefix}${name}`) ?? '';
      if (name !== 'default' && lists(body, 'pytest')) testing.push(name);
    }
  }
  return TEST_EXTRAS.find((e) => testing.includes(e)) ?? testing[0];
}

/** The extras a test run wants, in this order of preference. */
const TEST_EXTRAS = ['test', 'tests', 'testing', 'dev'] as const;

/** The body of a TOML table (`project`, `project.optional-dependencies`), up to the next header. */
function tableBody(text: string, table: string): string | undefined {
  const escaped = table.replace(/\./g, '\\.');
  return new RegExp(`^\\s*\\[${escaped}\\]\\s*$([\\s\\S]*?)(?=^\\s*\\[|(?![\\s\\S]))`, 'm').exec(
    text,
  )?.[1];
}

/** The `[project.optional-dependencies]` groups and the text of each list. */
function optionalDependencies(pyproject: string): Map<string, string> {
  const table = tableBody(pyproject, 'project.optional-dependencies');
  const groups = new Map<string, string>();
  if (table === undefined) return groups;
  for (const m of table.matchAll(/^\s*["']?([A-Za-z0-9_.-]+)["']?\s*=\s*\[([\s\S]*?)\]/gm)) {
    groups.set((m[1] ?? '').toLowerCase(), m[2] ?? '');
  }
  return groups;
}

/** The `[project]` table's `dependencies` list as text ('' when none). */
function dependencyList(pyproject: string): string {
  const project = tableBody(pyproject, 'project');
  return /^\s*dependencies\s*=\s*\[([\s\S]*?)\]/m.exec(project ?? '')?.[1] ?? '';
}

/** A requirement line or list entry naming `name` (`pytest==8`, `"pytest>=7"`, not `pytest-cov`). */
function lists(text: string, name: string): boolean {
  return new RegExp(`(^|["'\\s,])${name}(?=\\s*($|[<>=!~;[,"'@]))`, 'im').test(text);
}

/**
 * pip's setup: what `pip install` is given (the requirements files, else the project with
 * its test extra), and the text of what that installs, to see which gate tools it lacks.
 */
function pipInstalls(
  texts: ReadonlyMap<string, string>,
  requirements: readonly string[],
): { args: string[]; from: string; installed: string; warning?: string } | undefined {
  if (requirements.length > 0) {
    return {
      args: requirements.map((r) => `-r ${r}`),
      from: requirements.join(', '),
      installed: requirements.map((r) => texts.get(r) ?? '').join('\n'),
    };
  }
  const py = texts.get('pyproject.toml');
  if (!texts.has('setup.py') && (py === undefined || !projectDependencies(py))) return undefined;
  const file = texts.has('setup.py') ? 'setup.py' : 'pyproject.toml [project] dependencies';
  const extras = py === undefined ? new Map<string, string>() : optionalDependencies(py);
  const extra = TEST_EXTRAS.find((e) => extras.has(e));
  return {
    // Editable: the tests import the checkout's own code, never a copy setup made of an
    // earlier commit (the setup cache puts it back only in a checkout at the same path).
    args: [extra === undefined ? '-e .' : `-e '.[${extra}]'`],
    from: extra === undefined ? file : `${file}, [project.optional-dependencies] ${extra}`,
    installed: [py === undefined ? '' : dependencyList(py), extras.get(extra ?? '') ?? ''].join(
      '\n',
    ),
    warning: `${file}: no lockfile (uv.lock, poetry.lock, pdm.lock) or requirements file pins the Python dependencies: setup installs whatever versions resolve today`,
  };
}

function pythonFindings(
  paths: readonly string[],
  texts: ReadonlyMap<string, string>,
): EcosystemFindings | undefined {
  const requirements = paths.filter((p) => REQUIREMENTS.test(p)).sort(requirementsFirst);
  const py = texts.get('pyproject.toml');
  const isPython = py !== undefined || texts.has('setup.py') || requirements.length > 0;
  if (!isPython) return undefined;
  const warnings: string[] = [];
  const { manager, from, locked } = pythonManager(texts);
  const tools = pythonTools(paths, texts, requirements);
  const setup: Sourced[] = [];
  /** A gate tool's command line (`.venv/bin/python -m pytest`, `hatch run test:pytest`). */
  let gate: (args: string) => string;
  if (manager === 'pip') {
    const installs = pipInstalls(texts, requirements);
    // Nothing of the project's to install: the gates run with the system's Python.
    const python = installs === undefined ? 'python3' : VENV_PYTHON;
    gate = (args) => `${python} -m ${args}`;
    if (installs !== undefined) {
      // Each tool is installed as the package of its name (pytest, ruff, flake8, mypy).
      const missing = tools
        .map((t) => t.args.split(' ')[0] ?? '')
        .filter((name) => name !== '' && !lists(installs.installed, name));
      setup.push({
        command: `${VENV} && ${VENV_PYTHON} -m pip install ${[...installs.args, ...missing].join(' ')}`,
        from: installs.from,
      });
      if (installs.warning !== undefined) warnings.push(installs.warning);
    }
  } else {
    const env = IN_TREE[manager];
    // hatch runs in its default environment unless told: the one that installs pytest.
    const hatchEnv = manager === 'hatch' ? testEnvironment(texts) : undefined;
    gate = (args) =>
      `${env}${manager} run ${hatchEnv === undefined ? args : `${hatchEnv}:${args}`}`;
    const install = {
      uv: locked ? 'uv sync --locked' : 'uv sync',
      poetry: 'poetry install',
      pdm: locked ? 'pdm sync' : 'pdm install',
      hatch: hatchEnv === undefined ? 'hatch env create' : `hatch env create ${hatchEnv}`,
    }[manager];
    setup.push({
      command: `${env}${install}`,
      from: hatchEnv === undefined ? from : `${from}, environment ${hatchEnv} installs pytest`,
    });
    if (manager === 'hatch') {
      warnings.push(
        `hatch keeps no lockfile: setup "${install}" installs whatever versions resolve today; pin them in the environment's dependencies to keep them`,
      );
    } else if (!locked) {
      warnings.push(
        `${manager} without its lockfile: setup "${install}" can resolve other versions than yours; commit the lockfile to pin them`,
      );
    }
  }
  const gates = tools.map((t) => ({ command: gate(t.args), from: t.from }));
  if (!tools.some((t) => t.args === 'pytest')) {
    warnings.push(
      'a Python project without pytest configured (pyproject.toml [tool.pytest.ini_options], pytest.ini, conftest.py), listed, or test files under tests/: no test gate was written; add the command that runs your tests to gates:',
    );
  }
  const toolchains: Toolchain[] = ['python'];
  if (manager !== 'pip') toolchains.push(manager);
  return { setup, gates, toolchains, warnings };
}

/** `requirements.txt` before `requirements-dev.txt` and the others, each alphabetical. */
function requirementsFirst(a: string, b: string): number {
  if (a === 'requirements.txt') return -1;
  if (b === 'requirements.txt') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function goFindings(texts: ReadonlyMap<string, string>): EcosystemFindings | undefined {
  const mod = texts.get('go.mod');
  if (mod === undefined) {
    // A go.work alone: its modules are packages, each with its own gates (`detectPackages`).
    return texts.has('go.work')
      ? { setup: [], gates: [], toolchains: ['go'], warnings: [] }
      : undefined;
  }
  const requires = /^\s*require\b/m.test(mod);
  return {
    setup: requires ? [{ command: 'go mod download', from: 'go.mod require' }] : [],
    gates: [
      { command: 'go build ./...', from: 'go.mod' },
      { command: 'go vet ./...', from: 'go.mod' },
      { command: 'go test ./...', from: 'go.mod' },
    ],
    toolchains: ['go'],
    warnings: [],
  };
}

/** A member crate of the root's Cargo workspace: the root's lockfile and lints hold for it. */
export interface CargoMember {
  /** The root has a `Cargo.lock`. */
  readonly locked: boolean;
  /** Where the root configures clippy for the workspace, when it does. */
  readonly clippy: string | undefined;
}

/** What a member crate takes of the root: its `Cargo.lock`, its workspace's clippy lints. */
export function cargoMember(rootPaths: readonly string[], rootCargo: string): CargoMember {
  const clippy = (
    [
      [rootPaths.includes('clippy.toml'), 'clippy.toml'],
      [rootPaths.includes('.clippy.toml'), '.clippy.toml'],
      [hasTable(rootCargo, 'workspace.lints.clippy'), 'Cargo.toml [workspace.lints.clippy]'],
    ] as const
  ).find(([ok]) => ok)?.[1];
  return { locked: rootPaths.includes('Cargo.lock'), clippy };
}

/** Where clippy is configured in a folder's files, if it is. */
function clippyConfig(texts: ReadonlyMap<string, string>): string | undefined {
  const cargo = texts.get('Cargo.toml');
  return (
    [
      [texts.has('clippy.toml'), 'clippy.toml'],
      [texts.has('.clippy.toml'), '.clippy.toml'],
      [hasTable(cargo, 'lints.clippy'), 'Cargo.toml [lints.clippy]'],
      [hasTable(cargo, 'workspace.lints.clippy'), 'Cargo.toml [workspace.lints.clippy]'],
    ] as const
  ).find(([ok]) => ok)?.[1];
}

function rustFindings(
  texts: ReadonlyMap<string, string>,
  member: CargoMember | undefined,
): EcosystemFindings | undefined {
  const cargo = texts.get('Cargo.toml');
  if (cargo === undefined) return undefined;
  if (member !== undefined) {
    // Run in its folder, cargo builds and tests that crate alone, with the workspace's
    // Cargo.lock and target folder: the root's setup fetched for it.
    const flag = member.locked ? ' --locked' : '';
    const clippy =
      clippyConfig(texts) ??
      (member.clippy === undefined ? undefined : `the root's ${member.clippy}`);
    return {
      setup: [],
      gates: [
        { command: `cargo test${flag}`, from: 'Cargo.toml' },
        ...(clippy === undefined
          ? []
          : [{ command: `cargo clippy${flag} --all-targets -- -D warnings`, from: clippy }]),
      ],
      toolchains: ['rust'],
      warnings: [],
    };
  }
  const locked = texts.has('Cargo.lock');
  const flag = locked ? ' --locked' : '';
  const clippy = clippyConfig(texts);
  const workspace = cargoWorkspace(cargo);
  // A virtual manifest's members are packages, each with its own gates (`detectPackages`):
  // `cargo test` at the root would test every crate for every story.
  const virtual = workspace !== undefined && !workspace.rootPackage && workspace.members.length > 0;
  return {
    setup: locked ? [{ command: 'cargo fetch --locked', from: 'Cargo.lock' }] : [],
    gates: virtual
      ? []
      : [
          { command: `cargo test${flag}`, from: 'Cargo.toml' },
          ...(clippy === undefined
            ? []
            : [{ command: `cargo clippy${flag} --all-targets -- -D warnings`, from: clippy }]),
        ],
    toolchains: ['rust'],
    warnings: locked
      ? []
      : ['Cargo.toml without Cargo.lock: cargo resolves the newest matching versions each run'],
  };
}

/** Python, Go and Rust, in that order, for the ones the root holds. */
export function otherEcosystems(
  paths: readonly string[],
  texts: ReadonlyMap<string, string>,
  /** The folder is a member crate of the root's Cargo workspace. */
  cargoMember?: CargoMember,
): EcosystemFindings[] {
  return [pythonFindings(paths, texts), goFindings(texts), rustFindings(texts, cargoMember)].filter(
    (f): f is EcosystemFindings => f !== undefined,
  );
}

/** Whether the root file `path` is one these ecosystems read. */
export function wantsEcosystemText(path: string): boolean {
  return (ECOSYSTEM_FILES as readonly string[]).includes(path) || REQUIREMENTS.test(path);
}
