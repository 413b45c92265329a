/**
 * What `epicflow init` (and a config without `gates:`) decides from what it finds in the
 * repository: the setup command (the package manager and its lockfile, Python's, Go's,
 * Rust's), the gates (the test script, pytest, ruff, mypy, go test, cargo test…), and the
 * default branch. Pure: the CLI reads the files and asks git, then hands the facts in
 * here. Each decision it is unsure of comes with a warning for the user.
 */
import {
  isPythonTestFile,
  otherEcosystems,
  wantsEcosystemText,
  type CargoMember,
  type Sourced,
  type Toolchain,
} from './ecosystems.js';

/** What the CLI found in the repository. */
export interface RepoFacts {
  /** The names of the files in the repository's root. */
  readonly paths: readonly string[];
  /** The texts of the root's files `wantsText` names (the others are not read). */
  readonly texts: ReadonlyMap<string, string>;
  /** `origin/HEAD`'s branch (`main` of `refs/remotes/origin/main`), when it is set. */
  readonly originHead?: string | undefined;
  /** The branch checked out, when there is one. */
  readonly currentBranch?: string | undefined;
  /** The directory is a git repository at all. */
  readonly isGitRepo: boolean;
  /** It has an `origin` remote (whose HEAD would name the default branch). */
  readonly hasOrigin: boolean;
}

/** The Node files init looks for in the repository's root. */
const NODE_FILES = [
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lockb',
  'bun.lock',
  '.yarnrc.yml',
  '.nvmrc',
  '.node-version',
  '.bun-version',
] as const;

/** Whether detection reads the text of this root file (the others only count as present). */
export function wantsText(path: string): boolean {
  return (
    path === 'package.json' ||
    path === '.nvmrc' ||
    path === '.node-version' ||
    path === '.bun-version' ||
    wantsEcosystemText(path)
  );
}

/** Whether detection looks at this root file at all. */
export function wantsFile(path: string): boolean {
  return (NODE_FILES as readonly string[]).includes(path) || wantsText(path);
}

/**
 * What detection looks at in folder `dir` ('' the root) of the repository's `paths`,
 * relative to it: its own files `wantsFile` names, and the Python test files under its
 * `tests/` or `test/`.
 */
export function detectionPaths(paths: readonly string[], dir = ''): string[] {
  const prefix = dir === '' ? '' : `${dir}/`;
  return paths.flatMap((p) => {
    if (!p.startsWith(prefix)) return [];
    const rel = p.slice(prefix.length);
    return (!rel.includes('/') && wantsFile(rel)) || isPythonTestFile(rel) ? [rel] : [];
  });
}

type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

/** npm's placeholder test script (`npm init` writes it): it always fails. */
const NPM_PLACEHOLDER_TEST = 'echo "Error: no test specified" && exit 1';

/** The checks found in a repository's own files. */
export interface DetectedChecks {
  /** The setup commands joined with `&&`; undefined when nothing needs installing. */
  readonly setup: string | undefined;
  /** Each part of `setup` and the file it came from. */
  readonly setupFrom: readonly Sourced[];
  readonly gates: readonly Sourced[];
  /** What an Actions runner must set up besides Node. */
  readonly toolchains: readonly Toolchain[];
  /** One line per thing detection was unsure of. */
  readonly warnings: readonly string[];
}

interface InitDefaults extends DetectedChecks {
  /** The branch epics start from and land into; the orchestrate workflow listens to it. */
  readonly branch: string;
}

interface PackageJson {
  readonly packageManager?: unknown;
  readonly scripts?: unknown;
}

function parsePackageJson(text: string, warnings: string[]): PackageJson {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return value as PackageJson;
    }
  } catch {
    // reported below
  }
  warnings.push('package.json is not a JSON object: its package manager and scripts are unknown');
  return {};
}

/** `pnpm@9.1.0` → pnpm, major 9; anything else → undefined. */
function declaredManager(
  value: unknown,
): { readonly name: PackageManager; readonly major: number | undefined } | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(npm|pnpm|yarn|bun)(?:@(\d+))?/.exec(value);
  if (m === null) return undefined;
  return { name: m[1] as PackageManager, major: m[2] === undefined ? undefined : Number(m[2]) };
}

/** Each manager's lockfiles (any one will do). */
export const MANAGER_LOCKFILES: Readonly<Record<PackageManager, readonly string[]>> = {
  npm: ['package-lock.json', 'npm-shrinkwrap.json'],
  pnpm: ['pnpm-lock.yaml'],
  yarn: ['yarn.lock'],
  bun: ['bun.lockb', 'bun.lock'],
};

/** Which manager each lockfile belongs to. */
function lockfileManagers(files: ReadonlySet<string>): PackageManager[] {
  return (Object.keys(MANAGER_LOCKFILES) as PackageManager[]).filter((m) =>
    MANAGER_LOCKFILES[m].some((f) => files.has(f)),
  );
}

/**
 * The manager whose lockfile a setup command insists on (`npm ci`, a frozen or immutable
 * install), or undefined when it installs without one.
 */
export function lockedInstall(setup: string): PackageManager | undefined {
  if (/\bnpm\s+ci\b/.test(setup)) return 'npm';
  const m = /\b(pnpm|yarn|bun)\s+install\b[^;&|]*--(frozen-lockfile|immutable)\b/.exec(setup);
  return m === null ? undefined : (m[1] as PackageManager);
}

/** The install command for a manager, with or without a lockfile to hold it to. */
function installCommand(manager: PackageManager, locked: boolean, yarnBerry: boolean): string {
  switch (manager) {
    case 'npm':
      return locked ? 'npm ci' : 'npm install';
    case 'pnpm':
      return locked ? 'pnpm install --frozen-lockfile' : 'pnpm install';
    case 'yarn':
      if (!locked) return 'yarn install';
      return yarnBerry ? 'yarn install --immutable' : 'yarn install --frozen-lockfile';
    case 'bun':
      return locked ? 'bun install --frozen-lockfile' : 'bun install';
  }
}

function setupFor(
  files: ReadonlySet<string>,
  pkg: PackageJson,
  warnings: string[],
): Sourced & { readonly toolchain?: Toolchain } {
  const declared = declaredManager(pkg.packageManager);
  if (pkg.packageManager !== undefined && declared === undefined) {
    warnings.push(
      `package.json's packageManager ${JSON.stringify(pkg.packageManager)} is not npm, pnpm, yarn or bun: going by the lockfile`,
    );
  }
  const locks = lockfileManagers(files);
  let manager: PackageManager;
  if (declared !== undefined) {
    manager = declared.name;
    const others = locks.filter((l) => l !== manager);
    if (others.length > 0) {
      warnings.push(
        `package.json names ${manager} as its package manager, but there is a ${others.join(' and ')} lockfile too: setup uses ${manager}`,
      );
    }
  } else if (locks.length === 1 && locks[0] !== undefined) {
    manager = locks[0];
  } else if (locks.length > 1 && locks[0] !== undefined) {
    manager = locks[0];
    warnings.push(
      `lockfiles of ${locks.join(', ')} side by side: setup uses ${manager}; change setup: if that is wrong`,
    );
  } else {
    manager = 'npm';
  }
  const locked = locks.includes(manager);
  if (!locked) {
    warnings.push(
      `no ${manager} lockfile: setup installs with "${installCommand(manager, false, false)}", which can resolve other versions than yours; commit a lockfile to pin them`,
    );
  }
  const berry =
    manager === 'yarn' &&
    (files.has('.yarnrc.yml') || (declared?.major !== undefined && declared.major >= 2));
  const lockfile = MANAGER_LOCKFILES[manager].find((f) => files.has(f));
  // What a GitHub-hosted runner lacks: it has npm and Yarn 1.
  const toolchain =
    manager === 'pnpm' || manager === 'bun' ? manager : berry ? ('yarn' as const) : undefined;
  return {
    command: installCommand(manager, locked, berry),
    from: lockfile ?? (declared === undefined ? 'package.json' : 'package.json packageManager'),
    ...(toolchain === undefined ? {} : { toolchain }),
  };
}

/** The package manager the root's setup installs with ('npm' without a package.json). */
export function nodeManager(facts: Pick<RepoFacts, 'paths' | 'texts'>): string {
  const text = facts.texts.get('package.json');
  if (text === undefined) return 'npm';
  const command = setupFor(new Set(facts.paths), parsePackageJson(text, []), []).command;
  return command.split(' ')[0] ?? 'npm';
}

function gatesFor(manager: string, pkg: PackageJson, warnings: string[]): Sourced[] {
  const scripts =
    typeof pkg.scripts === 'object' && pkg.scripts !== null
      ? (pkg.scripts as Record<string, unknown>)
      : {};
  const test = scripts['test'];
  if (typeof test !== 'string' || test.trim() === '') {
    warnings.push(
      'package.json has no test script: no gates were written; add the commands that must pass before a story merges to gates:',
    );
    return [];
  }
  if (test.trim() === NPM_PLACEHOLDER_TEST) {
    warnings.push(
      "package.json's test script is npm's placeholder, which always fails: no gates were written; add the commands that must pass before a story merges to gates:",
    );
    return [];
  }
  // `bun test` is bun's own test runner, not the script.
  return [
    {
      command: manager === 'bun' ? 'bun run test' : `${manager} test`,
      from: 'package.json scripts.test',
    },
  ];
}

function branchFor(facts: RepoFacts, warnings: string[]): string {
  if (facts.originHead !== undefined && facts.originHead !== '') return facts.originHead;
  if (facts.currentBranch !== undefined && facts.currentBranch !== '') {
    // Without a remote, the branch checked out is the repository's only say.
    if (!facts.hasOrigin) return facts.currentBranch;
    warnings.push(
      `origin/HEAD is not set: taking the current branch "${facts.currentBranch}" as the default branch (git remote set-head origin --auto sets it)`,
    );
    return facts.currentBranch;
  }
  warnings.push(
    facts.isGitRepo
      ? 'no branch is checked out and origin/HEAD is not set: taking "main" as the default branch; change branches: in the orchestrate workflow if that is wrong'
      : 'not a git repository: taking "main" as the default branch; change branches: in the orchestrate workflow if that is wrong',
  );
  return 'main';
}

/** How a package's folder belongs to a workspace of the root, when it does. */
interface WorkspaceMember {
  /** A member of the root's npm, pnpm, yarn or bun workspace: the root's package manager. */
  readonly nodeManager?: string | undefined;
  /** A member crate of the root's Cargo workspace. */
  readonly cargo?: CargoMember | undefined;
  /** The root's test script runs this member's (`pnpm -r test`): none of its own. */
  readonly testedByRoot?: boolean;
}

/**
 * The setup and gates of a repository's root (or of a package's folder), each naming where
 * it came from. A member of the root's Node workspace (`member.nodeManager`) is installed
 * by the root's setup: its package.json adds gates, run with the root's manager, and no
 * setup; a member crate of its Cargo workspace is fetched by the root's setup too.
 */
export function detectChecks(
  facts: Pick<RepoFacts, 'paths' | 'texts'>,
  member: WorkspaceMember = {},
): DetectedChecks {
  const workspaceManager = member.nodeManager;
  const warnings: string[] = [];
  const setup: Sourced[] = [];
  const gates: Sourced[] = [];
  const toolchains: Toolchain[] = [];
  const files = new Set(facts.paths);
  const packageJson = facts.texts.get('package.json');
  if (packageJson !== undefined) {
    const pkg = parsePackageJson(packageJson, warnings);
    if (workspaceManager === undefined) {
      const node = setupFor(files, pkg, warnings);
      setup.push(node);
      if (node.toolchain !== undefined) toolchains.push(node.toolchain);
      gates.push(...gatesFor(node.command.split(' ')[0] ?? 'npm', pkg, warnings));
    } else if (member.testedByRoot !== true) {
      gates.push(...gatesFor(workspaceManager, pkg, warnings));
    }
  }
  const others = otherEcosystems(facts.paths, facts.texts, member.cargo);
  for (const found of others) {
    setup.push(...found.setup);
    gates.push(...found.gates);
    toolchains.push(...found.toolchains);
    warnings.push(...found.warnings);
  }
  if (packageJson === undefined && others.length === 0) {
    warnings.push(
      'no gates were detected (no package.json, pyproject.toml, requirements.txt, go.mod or Cargo.toml): stories would be judged by the perimeter alone; add the commands that must pass before a story merges to gates:',
    );
  }
  return {
    setup: setup.length === 0 ? undefined : setup.map((s) => s.command).join(' && '),
    setupFrom: setup,
    gates,
    toolchains,
    warnings,
  };
}

/**
 * The setup, gates and default branch `init` writes for a repository, with its doubts;
 * `inFolder`: the checks of the folder the root's run in, when the root has none (`appFolder`).
 */
export function initDefaults(facts: RepoFacts, inFolder?: DetectedChecks): InitDefaults {
  const checks = inFolder ?? detectChecks(facts);
  const warnings = [...checks.warnings];
  const branch = branchFor(facts, warnings);
  return { ...checks, branch, warnings };
}

/**
 * The part of the root's test script that runs the test script of every member of its
 * workspace (`pnpm -r test`, `npm test --workspaces`, `yarn workspaces foreach -A run test`,
 * `lerna run test`, `turbo run test`, `nx run-many -t test`); undefined when none does. A
 * filter (`pnpm --filter web test`) runs some members only: not counted.
 */
export function runsEveryMembersTests(rootPackageJson: string | undefined): string | undefined {
  let test: unknown;
  try {
    test = (JSON.parse(rootPackageJson ?? '') as { scripts?: { test?: unknown } } | null)?.scripts
      ?.test;
  } catch {
    return undefined; // the root's detection reports the text
  }
  if (typeof test !== 'string') return undefined;
  return test
    .split(/&&|\|\||;/)
    .map((part) => part.trim())
    .find(
      (part) =>
        !/--filter\b|(^|\s)-F\s/.test(part) &&
        [
          /^pnpm\s+(-r|--recursive)\s+(run\s+)?test\b/,
          /^pnpm\s+(run\s+)?test\s+(-r|--recursive)\b/,
          /^npm\s+(run\s+)?test\b.*\s(--workspaces|-ws)\b/,
          /^yarn\s+workspaces\s+run\s+test\b/,
          /^yarn\s+workspaces\s+foreach\b.*\s(-A|--all)\b.*\srun\s+test\b/,
          /^(npx\s+)?lerna\s+run\s+test\b/,
          /^(npx\s+)?turbo\s+(run\s+)?test\b/,
          /^(npx\s+)?nx\s+run-many\b.*\s(-t|--targets?)[\s=]([\w-]+,)*test\b/,
        ].some((r) => r.test(part)),
    );
}
