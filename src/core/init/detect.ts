/**
 * What `epicflow init` decides from what it finds in the repository: the setup command
 * (the package manager and its lockfile), the gates (the test script), and the default
 * branch. Pure: the CLI reads the files and asks git, then hands the facts in here. Each
 * decision it is unsure of comes with a warning for the user.
 */

/** What the CLI found in the repository's root. */
export interface RepoFacts {
  /** The text of package.json, when there is one. */
  readonly packageJson?: string | undefined;
  /** Which of the files in `LOCKFILES` (and `.yarnrc.yml`) exist in the root. */
  readonly files: ReadonlySet<string>;
  /** `origin/HEAD`'s branch (`main` of `refs/remotes/origin/main`), when it is set. */
  readonly originHead?: string | undefined;
  /** The branch checked out, when there is one. */
  readonly currentBranch?: string | undefined;
  /** The directory is a git repository at all. */
  readonly isGitRepo: boolean;
  /** It has an `origin` remote (whose HEAD would name the default branch). */
  readonly hasOrigin: boolean;
}

/** The files init looks for in the repository's root. */
export const LOCKFILES = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lockb',
  'bun.lock',
  '.yarnrc.yml',
] as const;

type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

/** npm's placeholder test script (`npm init` writes it): it always fails. */
const NPM_PLACEHOLDER_TEST = 'echo "Error: no test specified" && exit 1';

interface InitDefaults {
  /** Undefined: not a JavaScript repository, no setup command. */
  readonly setup: string | undefined;
  readonly gates: readonly string[];
  /** The branch epics start from and land into; the orchestrate workflow listens to it. */
  readonly branch: string;
  /** One line per thing init was unsure of. */
  readonly warnings: readonly string[];
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

function setupFor(facts: RepoFacts, pkg: PackageJson, warnings: string[]): string {
  const declared = declaredManager(pkg.packageManager);
  if (pkg.packageManager !== undefined && declared === undefined) {
    warnings.push(
      `package.json's packageManager ${JSON.stringify(pkg.packageManager)} is not npm, pnpm, yarn or bun: going by the lockfile`,
    );
  }
  const locks = lockfileManagers(facts.files);
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
    (facts.files.has('.yarnrc.yml') || (declared?.major !== undefined && declared.major >= 2));
  return installCommand(manager, locked, berry);
}

function gatesFor(manager: string, pkg: PackageJson, warnings: string[]): string[] {
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
  return [manager === 'bun' ? 'bun run test' : `${manager} test`];
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

/** The setup, gates and default branch `init` writes for a repository, with its doubts. */
export function initDefaults(facts: RepoFacts): InitDefaults {
  const warnings: string[] = [];
  let setup: string | undefined;
  let gates: string[] = [];
  if (facts.packageJson !== undefined) {
    const pkg = parsePackageJson(facts.packageJson, warnings);
    setup = setupFor(facts, pkg, warnings);
    gates = gatesFor(setup.split(' ')[0] ?? 'npm', pkg, warnings);
  }
  const branch = branchFor(facts, warnings);
  return { setup, gates, branch, warnings };
}
