/**
 * What a story's work job keeps of its run beside the record: each gate (and setup) run for
 * the job summary, and the logs it hands over in its artifact.
 */
import { FileStateStore } from '../../adapters/state/file-store.js';
import type { GateRun } from '../../core/gates/index.js';
import { ranOnStory } from '../../engine/checkout.js';
import type { GateRunner } from '../../engine/ports.js';

export /** One gate (or setup) run, for the job summary. */
interface GateLog {
  readonly command: string;
  readonly ok: boolean;
  readonly timedOut: boolean;
  /** The tree it ran in: a checkout of the story's commit, or the merged epic tree (or its base). */
  readonly where: 'story' | 'epic';
  readonly output: string;
}

/**
 * Gates that remember every run for the summary. Each tree is a folder of `worktrees`
 * (the story's checks run in its `<story>.checks` checkout); a package's command runs in its
 * folder inside the tree (`dir`), and is named with that folder, as failures name it.
 */
export function recordingGates(
  inner: GateRunner,
  log: GateLog[],
  trees: { readonly worktrees: string; readonly story: string },
): GateRunner {
  return {
    async run(command, options) {
      const r: GateRun = await inner.run(command, options);
      const dir = options.dir ?? '.';
      log.push({
        command: dir === '.' ? command : `${dir}: ${command}`,
        ok: r.ok,
        timedOut: r.timedOut === true,
        where: ranOnStory(options.cwd, trees.worktrees, trees.story) ? 'story' : 'epic',
        output: r.output,
      });
      return r;
    },
  };
}

/** Logs kept in `dir`, named in failure reasons as where people find them: the job's artifact. */
export function artifactLogs(dir: string): {
  writeText(name: string, text: string): Promise<string>;
} {
  const store = new FileStateStore(dir);
  return {
    writeText: async (name, text) => {
      await store.writeText(name, text);
      return `${name} in the job's artifact`;
    },
  };
}
