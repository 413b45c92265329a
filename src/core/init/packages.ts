/**
 * Packages inside a repository: the members of its npm, yarn or pnpm workspace
 * (package.json `workspaces`, `pnpm-workspace.yaml`), of its Go workspace (`go.work`
 * `use`) and of its Cargo workspace (`Cargo.toml` `[workspace] members`), and the folders with a manifest of
 * their own (package.json, pyproject.toml, go.mod, Cargo.toml) one level down, or two
 * under `apps/`, `packages/` and `services/`. Each gets the setup and gates the root's
 * detection finds in its folder. Pure: the CLI lists the repository's files (from git)
 * and reads the texts named here.
 */
import YAML from 'yaml';
import {
  detectChecks,
  detectionPaths,
  nodeManager,
  runsEveryMembersTests,
  wantsText,
  type DetectedChecks,
} from './detect.js';
import { cargoMember, type Sourced, type Toolchain } from './ecosystems.js';
import { cargoWorkspace, goWorkUses } from './workspaces.js';

/** The files whose folder is a package. */
const MANIFESTS = ['package.json', 'pyproject.toml', 'go.mod', 'Cargo.toml'] as const;

/** Folders whose children are packages without a workspace saying so. */
const PACKAGE_PARENTS = ['apps', 'packages', 'services'] as const;

/** Folders that hold examples, fixtures or other people's code, never a package of the repository. */
const NOT_PACKAGES = new Set([
  'node_modules',
  'vendor',
  'third_party',
  'test',
  'tests',
  '__tests__',
  'fixtures',
  '__fixtures__',
  'testdata',
  'examples',
  'example',
  'docs',
  'dist',
  'build',
  'target',
]);

/** A package found, with the checks of its folder (each `from` inside it). */
export interface DetectedPackage extends Omit<DetectedChecks, 'warnings'> {
  /** Its folder, relative to the root. */
  readonly path: string;
  /** A member of the root's Node or Cargo workspace: the root's setup installs (fetches) it. */
  readonly workspace: boolean;
  /** Why it is a package: the workspace that names it, or its own manifest. */
  readonly from: string;
}

interface FoundPackages {
  readonly packages: readonly DetectedPackage[];
  readonly toolchains: readonly Toolchain[];
  readonly warnings: readonly string[];
}

/** A package folder: a workspace member, and why it is a package. */
interface Folder {
  /** The manifest of the root's workspace it is a member of (none: a package by its own manifest). */
  readonly member: Manifest | undefined;
  readonly from: string;
}

type Manifest = (typeof MANIFESTS)[number];

/** A workspace the root declares: its members' manifest, where it is declared, its folders. */
interface Workspace {
  readonly manifest: Manifest;
  readonly from: string;
  readonly has: (dir: string) => boolean;
}

/** The root files package detection reads besides the root's own detection. */
export const WORKSPACE_FILES = [
  'package.json',
  'pnpm-workspace.yaml',
  'go.work',
  'Cargo.toml',
] as const;

function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '.' : path.slice(0, i);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** A workspace glob (`packages/*`, `apps/**`, `tools/cli`) as a test of a folder. */
function globTest(glob: string): (dir: string) => boolean {
  const clean = glob.replace(/^\.\//, '').replace(/\/+$/, '');
  const source = clean
    .split('/')
    .map((part) =>
      part === '**'
        ? '[^/]+(?:/[^/]+)*'
        : part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
    )
    .join('/');
  const re = new RegExp(`^${source}$`);
  return (dir) => re.test(dir);
}

/** The workspace globs of the root: package.json `workspaces`, `pnpm-workspace.yaml` `packages`. */
function workspaceGlobs(texts: ReadonlyMap<string, string>, warnings: string[]): string[] {
  const globs: string[] = [];
  const pkg = texts.get('package.json');
  if (pkg !== undefined) {
    let workspaces: unknown;
    try {
      workspaces = (JSON.parse(pkg) as { workspaces?: unknown } | null)?.workspaces;
    } catch {
      workspaces = undefined; // the root's detection reports the text
    }
    const list =
      typeof workspaces === 'object' && workspaces !== null && !Array.isArray(workspaces)
        ? (workspaces as { packages?: unknown }).packages
        : workspaces;
    if (Array.isArray(list)) globs.push(...list.filter((g): g is string => typeof g === 'string'));
    else if (workspaces !== undefined) {
      warnings.push(
        "package.json's workspaces is neither a list of folders nor { packages: [...] }: its members were not looked for",
      );
    }
  }
  const pnpm = texts.get('pnpm-workspace.yaml');
  if (pnpm !== undefined) {
    let value: unknown;
    try {
      value = YAML.parse(pnpm);
    } catch {
      value = undefined;
    }
    const list =
      typeof value === 'object' && value !== null
        ? (value as { packages?: unknown }).packages
        : undefined;
    if (Array.isArray(list)) globs.push(...list.filter((g): g is string => typeof g === 'string'));
    else
      warnings.push('pnpm-workspace.yaml has no list of packages: its members were not looked for');
  }
  return globs;
}

/** A folder that may be a package: no hidden, vendored, test or build folder on its way. */
export function plausibleFolder(dir: string): boolean {
  return dir
    .split('/')
    .every((part) => !part.startsWith('.') && !NOT_PACKAGES.has(part.toLowerCase()));
}

/** Globs (`!` excludes) as one test of a folder. */
function globsTest(globs: readonly string[]): (dir: string) => boolean {
  const include = globs.filter((g) => !g.startsWith('!')).map(globTest);
  const exclude = globs.filter((g) => g.startsWith('!')).map((g) => globTest(g.slice(1)));
  return (dir) => include.some((t) => t(dir)) && !exclude.some((t) => t(dir));
}

/**
 * The workspaces the root declares: npm, yarn or bun (`package.json` `workspaces`), pnpm
 * (`pnpm-workspace.yaml`), Go (`go.work` `use`) and Cargo (`Cargo.toml` `[workspace]`).
 */
function rootWorkspaces(texts: ReadonlyMap<string, string>, warnings: string[]): Workspace[] {
  const found: Workspace[] = [];
  const node = workspaceGlobs(texts, warnings);
  if (node.length > 0) {
    found.push({
      manifest: 'package.json',
      from: texts.has('pnpm-workspace.yaml') ? 'pnpm-workspace.yaml' : 'package.json workspaces',
      has: globsTest(node),
    });
  }
  const work = texts.get('go.work');
  if (work !== undefined) {
    const uses = new Set(goWorkUses(work));
    found.push({ manifest: 'go.mod', from: 'go.work use', has: (dir) => uses.has(dir) });
  }
  const cargo = texts.get('Cargo.toml');
  const crates = cargo === undefined ? undefined : cargoWorkspace(cargo);
  if (crates !== undefined) {
    found.push({
      manifest: 'Cargo.toml',
      from: 'Cargo.toml [workspace] members',
      has: globsTest([...crates.members, ...crates.exclude.map((e) => `!${e}`)]),
    });
  }
  return found;
}

/**
 * The package folders of a repository, from the paths of its files (relative to its root)
 * and the texts of its root's `WORKSPACE_FILES`; which workspace each is a member of.
 */
function packageFolders(
  paths: readonly string[],
  rootTexts: ReadonlyMap<string, string>,
): { readonly folders: ReadonlyMap<string, Folder>; readonly warnings: readonly string[] } {
  const warnings: string[] = [];
  const workspaces = rootWorkspaces(rootTexts, warnings);
  const folders = new Map<string, Folder>();
  for (const path of paths) {
    const manifest = MANIFESTS.find((m) => m === basename(path));
    if (manifest === undefined) continue;
    const dir = dirname(path);
    if (dir === '.' || !plausibleFolder(dir)) continue;
    const depth = dir.split('/').length;
    const conventional =
      depth === 1 ||
      (depth === 2 && (PACKAGE_PARENTS as readonly string[]).includes(dir.split('/')[0] ?? ''));
    const named = workspaces.filter((w) => w.has(dir));
    if (!conventional && named.length === 0) continue;
    const workspace = named.find((w) => w.manifest === manifest);
    const known = folders.get(dir);
    if (known === undefined || (workspace !== undefined && known.member === undefined)) {
      folders.set(dir, {
        member: workspace?.manifest,
        from: workspace?.from ?? `its own ${manifest}`,
      });
    }
  }
  return { folders: new Map([...folders].sort(([a], [b]) => a.localeCompare(b))), warnings };
}

/**
 * The files of the package folders whose texts detection reads, from the paths of a
 * repository's files and the texts of its root's `WORKSPACE_FILES`.
 */
export function packageTextPaths(
  paths: readonly string[],
  rootTexts: ReadonlyMap<string, string>,
): string[] {
  const { folders } = packageFolders(paths, rootTexts);
  return paths.filter((p) => {
    const dir = dirname(p);
    return dir !== '.' && folders.has(dir) && wantsText(basename(p));
  });
}

/**
 * The packages of a repository with the checks of each: `paths` are its files, `texts` the
 * texts of the root's and the packages' files that `wantsText` names, by their paths.
 */
export function detectPackages(
  paths: readonly string[],
  texts: ReadonlyMap<string, string>,
): FoundPackages {
  const rootTexts = new Map(
    WORKSPACE_FILES.flatMap((f) => {
      const t = texts.get(f);
      return t === undefined ? [] : [[f, t] as const];
    }),
  );
  const { folders, warnings: found } = packageFolders(paths, rootTexts);
  const warnings = [...found];
  const rootFiles = paths.filter((p) => !p.includes('/'));
  const manager = nodeManager({ paths: rootFiles, texts: rootTexts });
  const crate = cargoMember(rootFiles, rootTexts.get('Cargo.toml') ?? '');
  const rootTests = runsEveryMembersTests(rootTexts.get('package.json'));
  let testedByRoot = 0;
  const packages: DetectedPackage[] = [];
  const toolchains = new Set<Toolchain>();
  for (const [dir, { member, from }] of folders) {
    const own = [
      ...paths.filter((p) => dirname(p) === dir).map(basename),
      ...detectionPaths(paths, dir).filter((p) => p.includes('/')),
    ];
    const ownTexts = new Map(
      own.flatMap((name) => {
        const t = texts.get(`${dir}/${name}`);
        return t === undefined ? [] : [[name, t] as const];
      }),
    );
    const byRoot = member === 'package.json' && rootTests !== undefined;
    const checks = detectChecks(
      { paths: own, texts: ownTexts },
      {
        nodeManager: member === 'package.json' ? manager : undefined,
        cargo: member === 'Cargo.toml' ? crate : undefined,
        testedByRoot: byRoot,
      },
    );
    if (byRoot) testedByRoot += 1;
    // Where a command came from: a file of the folder, or one of the root's (said so).
    const inside = (s: Sourced): Sourced =>
      own.includes(s.from.split(' ')[0] ?? '') ? { ...s, from: `${dir}/${s.from}` } : s;
    warnings.push(...checks.warnings.map((w) => `${dir}: ${w}`));
    // Nothing to check: its setup alone would install for nothing.
    if (checks.gates.length === 0) continue;
    checks.toolchains.forEach((t) => toolchains.add(t));
    packages.push({
      path: dir,
      // The root's setup installs a Node workspace's members and fetches a Cargo workspace's.
      workspace: member === 'package.json' || member === 'Cargo.toml',
      from,
      setup: checks.setup,
      setupFrom: checks.setupFrom.map(inside),
      gates: checks.gates.map(inside),
      toolchains: checks.toolchains,
    });
  }
  if (testedByRoot > 0) {
    warnings.push(
      `the root's test script runs the tests of every member of its workspace (${JSON.stringify(rootTests)}): a member's test script is no gate of its own (${testedByRoot} members), so no story runs them twice`,
    );
  }
  return { packages, toolchains: [...toolchains], warnings };
}
