/**
 * Packages inside a repository (a workspace, `apps/web`, a Go module in `services/api`):
 * which of them a story touches, and the checks a story or the epic's merged tree runs —
 * the root's setup and gates, then each touched package's, in its own folder. Pure.
 */
import type { EpicflowConfig, PackageConfig } from './config/types.js';
import { normalisePath, overlaps } from './paths.js';

/** One command of a check scope, run in `dir` (relative to the tree; `.` is the root). */
export interface ScopedCommand {
  readonly dir: string;
  readonly command: string;
  /** How reports and messages name it: the command, after its package's folder. */
  readonly label: string;
}

/** What one check runs: the setups in order, then the gates in order. */
export interface CheckScope {
  /** The packages it covers (their folders), besides the root. */
  readonly packages: readonly string[];
  readonly setup: readonly ScopedCommand[];
  readonly gates: readonly ScopedCommand[];
  /** Equal for equal scopes: baselines and checked runs are kept per scope. */
  readonly key: string;
}

/**
 * The packages a story's `owns` touch: a package is touched when one of the owned paths
 * lies inside its folder, or its folder lies inside an owned path (`.` owns all of them).
 */
export function touchedPackages(
  packages: readonly PackageConfig[],
  owns: readonly string[],
): PackageConfig[] {
  const owned = owns.map(normalisePath);
  return packages.filter((p) => {
    const path = normalisePath(p.path);
    return owned.some((o) => overlaps(o, path));
  });
}

/** `packages/api: npm test`; a root command is named as itself. */
function scoped(dir: string, command: string): ScopedCommand {
  return { dir, command, label: dir === '.' ? command : `${dir}: ${command}` };
}

/** The root's checks and those of `packages` (the ones touched), in the config's order. */
export function checkScope(
  config: Pick<EpicflowConfig, 'setup' | 'gates' | 'packages'>,
  packages: readonly PackageConfig[],
): CheckScope {
  const chosen = new Set(packages.map((p) => normalisePath(p.path)));
  const included = (config.packages ?? []).filter((p) => chosen.has(normalisePath(p.path)));
  const setup: ScopedCommand[] = [];
  const gates: ScopedCommand[] = [];
  if (config.setup !== undefined && config.setup.trim() !== '') {
    setup.push(scoped('.', config.setup));
  }
  gates.push(...config.gates.map((g) => scoped('.', g)));
  for (const p of included) {
    const dir = normalisePath(p.path);
    if (p.setup !== undefined && p.setup.trim() !== '') setup.push(scoped(dir, p.setup));
    gates.push(...p.gates.map((g) => scoped(dir, g)));
  }
  const paths = included.map((p) => normalisePath(p.path));
  return {
    packages: paths,
    setup,
    gates,
    // A repository without packages keeps the key its baselines were stored under.
    key: JSON.stringify(
      paths.length === 0
        ? { gates: config.gates, setup: config.setup ?? null }
        : {
            setup: setup.map((s) => [s.dir, s.command]),
            gates: gates.map((g) => [g.dir, g.command]),
          },
    ),
  };
}

/** The scope of a story: the root's checks and those of the packages its `owns` touch. */
export function storyScope(
  config: Pick<EpicflowConfig, 'setup' | 'gates' | 'packages'>,
  owns: readonly string[],
): CheckScope {
  return checkScope(config, touchedPackages(config.packages ?? [], owns));
}

/** The scope of the epic's merged tree: every package any of its stories touches. */
export function epicScope(
  config: Pick<EpicflowConfig, 'setup' | 'gates' | 'packages'>,
  stories: readonly { readonly owns: readonly string[] }[],
): CheckScope {
  return storyScope(
    config,
    stories.flatMap((s) => s.owns),
  );
}

/** The story's note naming the packages its checks ran for; undefined without packages. */
export function packagesNote(scope: CheckScope): string | undefined {
  if (scope.packages.length === 0) return undefined;
  return `checks ran for ${scope.packages.join(', ')} (with the root's)`;
}
