/**
 * A repository whose root is no project of its own (no package.json, pyproject.toml,
 * go.mod…) and whose app lives in a folder (`app/`, `web/`): when exactly one folder one
 * level down has a package.json, the setup and gates detection finds there become the
 * root's, run in that folder (`cd app && npm ci`) for every story. With two or more such
 * folders none is chosen, and a warning says so. Pure.
 */
import { detectChecks, wantsFile, type DetectedChecks } from './detect.js';
import type { Sourced } from './ecosystems.js';
import { plausibleFolder } from './packages.js';
import { shellWord } from '../shell-word.js';

/** The root's checks, found in one folder and run there. */
interface AppFolderChecks extends DetectedChecks {
  /** The folder, relative to the root (one level down). */
  readonly dir: string;
}

interface AppFolder {
  /** The folder the root's checks run in; undefined when none was chosen. */
  readonly found?: AppFolderChecks | undefined;
  /** Why none was chosen when several were candidates. */
  readonly warnings: readonly string[];
}

/** `command` run in `dir`: `cd app && npm test`. */
export function inFolder(dir: string, command: string): string {
  return `cd ${shellWord(dir)} && ${command}`;
}

/**
 * The folder a command starts by changing into (`cd app && npm ci` → `app`), or `.` when
 * it runs at the root: where the files it reads (a lockfile) are.
 */
export function commandFolder(command: string): string {
  const m = /^\s*cd\s+(?:'([^']+)'|([^\s'";&|]+))\s*&&/.exec(command);
  const dir = m?.[1] ?? m?.[2];
  return dir === undefined ? '.' : dir.replace(/^\.\//, '').replace(/\/+$/, '') || '.';
}

/**
 * The app folder of a repository (`paths`: its files relative to the root; `texts`: the
 * texts detection reads, by path), when its root has no checks of its own.
 */
export function appFolder(paths: readonly string[], texts: ReadonlyMap<string, string>): AppFolder {
  const rootPaths = paths.filter((p) => !p.includes('/') && wantsFile(p));
  const rootTexts = new Map([...texts].filter(([p]) => !p.includes('/')));
  const root = detectChecks({ paths: rootPaths, texts: rootTexts });
  if (root.setup !== undefined || root.gates.length > 0) return { warnings: [] };
  const candidates = paths
    .filter((p) => /^[^/]+\/package\.json$/.test(p))
    .map((p) => p.slice(0, p.indexOf('/')))
    .filter(plausibleFolder)
    .sort();
  if (candidates.length > 1) {
    return {
      warnings: [
        `no project at the root and a package.json in each of ${candidates.map((c) => `${c}/`).join(', ')}: setup and gates are not run in any of them for every story (each is checked as a package when a story touches it); to run one's for every story, write its commands under gates:, like "cd ${shellWord(candidates[0] ?? '')} && npm test"`,
      ],
    };
  }
  const dir = candidates[0];
  if (dir === undefined) return { warnings: [] };
  const prefix = `${dir}/`;
  const own = paths.filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/'));
  const checks = detectChecks({
    paths: own.map((p) => p.slice(prefix.length)),
    texts: new Map(
      own.flatMap((p) => {
        const t = texts.get(p);
        return t === undefined ? [] : [[p.slice(prefix.length), t] as const];
      }),
    ),
  });
  if (checks.setup === undefined && checks.gates.length === 0) {
    return { warnings: checks.warnings.map((w) => `${dir}: ${w}`) };
  }
  const moved = (s: Sourced): Sourced => ({
    command: inFolder(dir, s.command),
    from: `${dir}/${s.from}`,
  });
  return {
    found: {
      dir,
      // One `cd` for the whole setup: its parts run one after another in the folder.
      setup: checks.setup === undefined ? undefined : inFolder(dir, checks.setup),
      setupFrom: checks.setupFrom.map(moved),
      gates: checks.gates.map(moved),
      toolchains: checks.toolchains,
      warnings: checks.warnings.map((w) => `${dir}: ${w}`),
    },
    warnings: [],
  };
}
