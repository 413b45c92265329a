/**
 * The one rule every entry applies to its configuration (the local commands, and the
 * story and landing jobs on GitHub): a config that leaves `gates:` out takes the checks
 * the repository's own files name (`epicflow init` would write the same), with their
 * setup unless it names its own; `gates: []` says there are none. One that leaves
 * `packages:` out takes the packages found inside the repository, each with its checks;
 * `packages: []` says there are none. Pure: the caller reads the repository's files
 * (the working tree locally, a commit's objects in a job) and hands them in here.
 */
import { leavesOut } from '../config/schema.js';
import { normalisePath } from '../paths.js';
import type { EpicflowConfig } from '../config/types.js';
import { appFolder, inFolder } from './app-folder.js';
import { detectChecks, detectionPaths, type DetectedChecks } from './detect.js';
import { detectPackages } from './packages.js';

/** What a config leaves to detection. */
export interface LeftToDetection {
  readonly gates: boolean;
  readonly packages: boolean;
}

/** The parts of the config text `text` that detection fills in. */
export function leftToDetection(text: string): LeftToDetection {
  return { gates: leavesOut(text, 'gates'), packages: leavesOut(text, 'packages') };
}

/** The repository's files detection reads. */
export interface DetectionFiles {
  /** Every file of the repository, relative to its root (a root file has no `/`). */
  readonly paths: readonly string[];
  /** The texts of the files `wantsText` names, of the root's and of the packages' folders. */
  readonly texts: ReadonlyMap<string, string>;
}

/**
 * The root's checks: those of its own files, or, when it has none, those of the one folder
 * one level down with a package.json, run in it (`appFolder`).
 */
function rootChecks(files: DetectionFiles, packages: EpicflowConfig['packages']): DetectedChecks {
  const paths = detectionPaths(files.paths);
  const texts = new Map([...files.texts].filter(([p]) => !p.includes('/')));
  const found = detectChecks({ paths, texts });
  if (found.gates.length > 0 || found.setup !== undefined) return found;
  const app = appFolder(files.paths, files.texts).found;
  // A folder the config names as a package keeps its checks there (they would run twice).
  if (app === undefined || (packages ?? []).some((p) => normalisePath(p.path) === app.dir)) {
    return found;
  }
  return app;
}

/** `config` with what it leaves out filled in from the repository's files. */
export function withDetected(
  config: EpicflowConfig,
  left: LeftToDetection,
  files: DetectionFiles,
): EpicflowConfig {
  let result = config;
  if (left.gates) {
    const found = rootChecks(files, left.packages ? undefined : config.packages);
    if (found.gates.length > 0 || found.setup !== undefined) {
      const setup = config.setup ?? found.setup;
      result = {
        ...result,
        gates: found.gates.map((g) => g.command),
        ...(setup === undefined ? {} : { setup }),
      };
    }
  }
  if (left.packages) {
    // A folder whose gates the root's already run in it (`cd app && npm test`) is no package besides.
    const atRoot = new Set(result.gates);
    const packages = detectPackages(files.paths, files.texts).packages.filter(
      (p) => !p.gates.every((g) => atRoot.has(inFolder(p.path, g.command))),
    );
    if (packages.length > 0) {
      result = {
        ...result,
        packages: packages.map((p) => ({
          path: p.path,
          ...(p.setup === undefined ? {} : { setup: p.setup }),
          gates: p.gates.map((g) => g.command),
        })),
      };
    }
  }
  return result;
}

/**
 * What detection could not decide for a config that leaves its gates out, one line each
 * (`epicflow doctor` and `run` say them as warnings): several folders with a package.json
 * under a root that is no project, of which none is chosen.
 */
export function detectionNotes(left: LeftToDetection, files: DetectionFiles): string[] {
  return left.gates ? [...appFolder(files.paths, files.texts).warnings] : [];
}
