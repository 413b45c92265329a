/**
 * The checks of a story commit (gates against the baseline, the oracle guard,
 * the perimeter), putting back strays, and the guards around code epicflow does
 * not trust: git's configuration restored after it, the tree held at the checked commit.
 */
import {
  inheritedLines,
  oracleFindings,
  parsePassCount,
  triageGate,
  type GateRun,
  type GateVerdict,
} from '../../core/gates/index.js';
import type { Story } from '../../core/model.js';
import {
  classifyChanges,
  type PerimeterChange,
  type PerimeterResult,
} from '../../core/perimeter/index.js';
import { packagesNote } from '../../core/packages.js';
import { nestedLeftOut, type CheckFacts } from '../../core/story/index.js';
import { settleGates } from '../settle-gates.js';
import type { EpicContext } from '../context.js';
import type { GitPort, LeftOut, WorktreePort } from '../ports.js';
import type { Recorder } from './recorder.js';
import { withGitConfigGuarded } from '../guarded-config.js';
import { fromCommit, storyChecksTree, type CheckoutNote } from '../checkout.js';
import { basename } from 'node:path';

/**
 * Runs code in the story's tree that epicflow does not trust (an agent's turn,
 * setup and gates running the code it wrote) with git's own configuration
 * guarded: whatever it changed there (a filter, a merge driver, a proxy, the
 * `.git` file) is put back byte for byte before epicflow runs git again, and noted.
 */
export async function guardGitConfig<T>(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  during: string,
  work: () => Promise<T>,
): Promise<T> {
  return withGitConfigGuarded(tree, during, work, noteOn(ctx, story, rec));
}

/**
 * After code epicflow does not trust ran in the tree (gates, a judge's or verifier's
 * tools): the story is checked and merged as the commit `sha`, so the tree is put back
 * there, and whatever the code committed or left changed is discarded and noted.
 */
export async function holdAt(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  sha: string,
  during: string,
): Promise<void> {
  const head = await tree.head();
  const dirty = await tree.dirtyPaths();
  if (head === sha && dirty.length === 0) return;
  const what = [
    ...(head === sha ? [] : [`committed ${head.slice(0, 12)}`]),
    ...(dirty.length === 0
      ? []
      : [`left changes in ${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}`]),
  ].join(' and ');
  await tree.resetHard(sha);
  const note = `${during} ${what}: discarded (checked as ${sha.slice(0, 12)})`;
  await rec.save({ notes: [...rec.record.notes, note] });
  ctx.emit('story', note, story.id);
}

/** Notes (and events) each repository nested in the story's tree that a commit left out. */
export function noteNestedLeftOut(ctx: EpicContext, story: Story, rec: Recorder): LeftOut {
  return async (folders) => {
    const notes = folders.map(nestedLeftOut);
    await rec.save({ notes: [...rec.record.notes, ...notes] });
    for (const note of notes) ctx.emit('story', note, story.id);
  };
}

/** A story's notes (and events) of what code it does not trust did in a tree of its own. */
export function noteOn(ctx: EpicContext, story: Story, rec: Recorder): CheckoutNote {
  return async (note, restored) => {
    await rec.save({ notes: [...rec.record.notes, note] });
    ctx.emit('story', note, story.id, restored === undefined ? undefined : { restored });
  };
}

/**
 * A setup that fails on the story's commit is its first failing check, named as the setup
 * command (`npm ci (setup)`): the commit needs something only the agent's tree had.
 */
function setupFailed(failure: { readonly output: string; readonly command: string }): {
  runs: GateRun[];
  verdicts: GateVerdict[];
  notes: string[];
  setupRan: boolean;
} {
  const run: GateRun = { command: `${failure.command} (setup)`, ok: false, output: failure.output };
  return { runs: [run], verdicts: [triageGate(run, undefined)], notes: [], setupRan: false };
}

/** A story's note when no gates are configured or found: the report shows it on each. */
const NO_GATES_NOTE = 'no gates: judged by the perimeter alone';

/**
 * Every symbolic link of `commit`'s tree (path → target), read from git's objects, never
 * through a checkout: what a changed link is followed through. None read when no change is
 * a link (only a changed link can make a chain leave).
 */
export async function commitLinks(
  git: Pick<GitPort, 'treeFiles' | 'readBlobs'>,
  commit: string,
  changes: readonly PerimeterChange[],
): Promise<Map<string, string>> {
  if (!changes.some((c) => c.mode === 'symlink' && c.status !== 'deleted')) return new Map();
  const links = (await git.treeFiles(commit)).filter((f) => f.mode === '120000');
  const blobs = await git.readBlobs(links.map((f) => f.object));
  const text = new TextDecoder();
  // A target that cannot be read leads nowhere safe.
  return new Map(
    links.map((f) => {
      const blob = blobs.get(f.object);
      return [f.path, blob === undefined ? '/' : text.decode(blob)];
    }),
  );
}

/** The story's changes in `commit` against `base`, and the perimeter's judgement of them. */
export async function perimeterOf(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  base: string,
  commit: string,
): Promise<{ changes: PerimeterChange[]; perimeter: PerimeterResult }> {
  const changes = await tree.changedPaths(base, commit);
  const perimeter = classifyChanges({
    changes,
    owns: story.owns,
    reads: story.reads,
    configPaths: ctx.settings.configPaths,
    allowWorkflowChanges: ctx.config.allowWorkflowChanges,
    links: await commitLinks(ctx.ports.git, commit, changes),
  });
  return { changes, perimeter };
}

/** The checks of one commit: the story is merged as this commit or not at all. */
interface CheckResult extends Omit<CheckFacts, 'interrupted'> {
  readonly verdicts: GateVerdict[];
  readonly oracle: string[];
  readonly perimeter: PerimeterResult;
  readonly runs: GateRun[];
}

/** Gates against the baseline, the oracle guard and the perimeter of the branch as it is. */
export async function checkStory(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  base: string,
  baseline: readonly GateRun[],
): Promise<CheckResult> {
  // What is judged is a commit, not the tree: the tree is held at it after the gates.
  const commit = await tree.head();
  const { changes, perimeter } = await perimeterOf(ctx, story, tree, base, commit);
  if (changes.length === 0) {
    return { verdicts: [], oracle: [], perimeter, runs: [], empty: true, commit };
  }
  // The root's checks and those of the packages the story's owns touch.
  const scope = ctx.storyScope(story);
  const note = scope.gates.length === 0 ? NO_GATES_NOTE : packagesNote(scope);
  if (note !== undefined && !rec.record.notes.includes(note)) {
    await rec.save({ notes: [...rec.record.notes, note] });
  }
  // The gates run the code the agent wrote, on a fresh checkout of the commit with setup
  // run there: nothing the agent left outside the commit (an ignored module) is used.
  const pending = rec.time(
    'gates',
    () =>
      fromCommit(
        ctx,
        {
          sha: commit,
          name: basename(storyChecksTree(ctx.settings.worktreesDir, story.id)),
          during: 'the gates',
          note: noteOn(ctx, story, rec),
        },
        async (checkout) => {
          const setup =
            scope.setup.length === 0
              ? null
              : await rec.logs.capture('setup', (log) =>
                  ctx.setupOn(checkout.path, commit, log, story.id, scope),
                );
          if (setup !== null) return setupFailed(setup);
          const settled = await settleGates(ctx, {
            cwd: checkout.path,
            story: story.id,
            scope,
            baseline,
            // One log per gate command: a failure points to the log of the gate that failed.
            withLog: (_i, work) => rec.logs.capture('gates', work),
            againOnBase: (i, log) => ctx.merge.run(() => ctx.rerunBaseline(base, i, log, scope)),
          });
          return { ...settled, setupRan: true };
        },
      ),
    { 'epicflow.commit': commit },
    (settled) => ({
      'epicflow.gates': settled.runs.length,
      'epicflow.gates.failing': settled.verdicts.filter((v) => v.status === 'new').length,
    }),
  );
  ctx.checkpoint('mid-gates', story.id);
  const { runs, verdicts, notes, setupRan } = await pending;
  // A process the agent left behind may have committed in the story's tree meanwhile.
  await holdAt(ctx, story, tree, rec, commit, 'the gates');
  if (setupRan && scope.key === ctx.scope.key && runs.length === scope.gates.length) {
    ctx.checkedRuns.set(commit, runs);
  }
  for (const note of notes) ctx.emit('story', note, story.id);
  if (notes.length > 0) await rec.save({ notes: [...rec.record.notes, ...notes] });
  // Gates red on the base already, tolerated on this commit: the report lists them.
  const red = verdicts.flatMap((v, i) => {
    const [run, base] = [runs[i], baseline[i]];
    return v.status === 'inherited' && run !== undefined && base !== undefined
      ? [{ command: v.command, lines: inheritedLines(run, base) }]
      : [];
  });
  const inherited = red.map((r) => r.command);
  if (inherited.length > 0 || rec.record.inherited !== undefined) {
    await rec.save({ inherited, inheritedLines: red });
  }
  const counts = (
    list: readonly (number | null)[],
    other: readonly (number | null)[],
  ): number | null => {
    // Only gates that report a count on both sides are compared.
    let sum: number | null = null;
    list.forEach((n, i) => {
      if (n !== null && other[i] !== null && other[i] !== undefined) sum = (sum ?? 0) + n;
    });
    return sum;
  };
  const current = verdicts.map((v) => v.passCount);
  // Read from the whole output when the gate runner gathered it (older stored baselines: the text).
  const before = baseline.map((b) =>
    b.passCount !== undefined ? b.passCount : parsePassCount(b.output),
  );
  const diff = changes.some((c) => c.status !== 'deleted')
    ? await ctx.ports.git.diff(base, commit)
    : '';
  const oracle = oracleFindings({
    changes,
    diff,
    baselinePassed: counts(before, current),
    currentPassed: counts(current, before),
    testsChange: story.testsChange,
  });
  return { verdicts, oracle, perimeter, runs, empty: false, commit };
}

/** Puts paths outside the perimeter back as on the epic base, as a commit of the story. */
export async function restoreStrays(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  base: string,
  paths: readonly string[],
): Promise<void> {
  const sha = await rec.time('perimeter', async () => {
    await tree.restorePaths(base, paths);
    return tree.commitAll(`${story.id}: put paths outside the perimeter back`);
  });
  if (sha !== null) await rec.save({ progress: { commit: sha, passed: 'none' } });
  ctx.checkpoint('after-restore', story.id);
  await rec.save({
    notes: [...rec.record.notes, `restored outside its perimeter: ${paths.join(', ')}`],
  });
  ctx.emit(
    'story',
    `restored ${paths.length} path(s) outside its perimeter from ${ctx.settings.epicBranch}: ${paths.join(', ')}`,
    story.id,
  );
}
