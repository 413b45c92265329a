/**
 * `epicflow status [--epic ID] [--repo DIR] [--json]`: the board of an epic run in this
 * repository, rebuilt from its records and the epic branch. On a terminal the markdown
 * board; otherwise plain lines, one per story; with `--json` the report.json document.
 * `--list`: every epic that ran in the repository, one line each.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FileStateStore } from '../../adapters/state/file-store.js';
import { EpicflowError } from '../../core/errors.js';
import { epicFolder, openRepo } from './epic-folder.js';
import { printable } from './logs.js';
import { gitPort } from '../../adapters/git/port.js';
import { storyLogsDir } from '../../core/story/index.js';
import { sanitizeIssueText } from '../../core/epic/index.js';
import {
  buildReportJson,
  epicListEntry,
  renderBoard,
  renderEpicList,
  type EpicListEntry,
  type ReportJson,
} from '../../core/report/index.js';
import { LAND_FILE, readLandLog } from '../../core/land/index.js';
import type { Git } from '../../adapters/git/index.js';
import { epicStateDir, localEpics } from '../../jobs/local/local-epics.js';
import { loadEpicReport } from '../../engine/status.js';

interface StatusCommandOptions {
  readonly epic?: string;
  readonly repo?: string;
  readonly json?: boolean;
  /** `--list`: every epic of the repository instead of one epic's board. */
  readonly list?: boolean;
}

interface StatusCommandIo {
  stdout(s: string): void;
  stderr(s: string): void;
  readonly cwd: string;
  readonly isTTY: boolean;
}

/** One line per story that has logs: where the whole output of its setup, gates and turns is. */
async function logLines(stateDir: string): Promise<string> {
  const dir = join(stateDir, storyLogsDir(''));
  if (!existsSync(dir)) return '';
  const stories = (await readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  if (stories.length === 0) return '';
  const width = Math.max(...stories.map((s) => s.length));
  return `\nLogs (setup, gates and agent turns, whole):\n${stories
    .map((s) => `  ${s.padEnd(width)}  ${join(stateDir, storyLogsDir(s))}/\n`)
    .join('')}`;
}

/** Text from people on one plain line: control characters and line breaks become spaces. */
function plain(text: string): string {
  return sanitizeIssueText(text).replace(/\s+/g, ' ').trim();
}

/** The board as plain lines: a header, then `status  id  executor  title[ — reason]` per story. */
function plainLines(report: ReportJson): string[] {
  const c = report.counts;
  const lines = [
    `epic ${report.epic} (${report.epicBranch})${report.title === null ? '' : `: ${plain(report.title)}`}\n`,
    `${c.done} done, ${c.failed} failed, ${c.waiting} waiting, ${c.active} active, ${c.planned} planned\n`,
  ];
  const idWidth = Math.max(0, ...report.stories.map((s) => s.id.length));
  for (const s of report.stories) {
    const reason = s.reason === null || s.boardStatus === 'done' ? '' : ` — ${plain(s.reason)}`;
    lines.push(
      `${s.boardStatus.padEnd(7)} ${s.id.padEnd(idWidth)}  ${plain(s.executor ?? '-')}  ${plain(s.title)}${reason}\n`,
    );
  }
  return lines;
}

/** One list entry per epic that ran in the repository (one with no board yet is left out). */
async function epicList(repo: Git): Promise<EpicListEntry[]> {
  const entries: EpicListEntry[] = [];
  for (const epic of await localEpics(repo)) {
    const dir = epicStateDir(repo, epic);
    const store = new FileStateStore(dir);
    const input = await loadEpicReport(store, gitPort(repo), { now: () => new Date() });
    if (input === null) continue;
    const lands = readLandLog(await store.readJson<unknown>(LAND_FILE), join(dir, LAND_FILE));
    const entry = epicListEntry(buildReportJson(input), lands, await store.lockHeld());
    entries.push({ ...entry, title: entry.title === null ? null : plain(printable(entry.title)) });
  }
  return entries;
}

export async function statusCommand(
  opts: StatusCommandOptions,
  io: StatusCommandIo,
): Promise<number> {
  if (opts.list === true) {
    if (opts.epic !== undefined) {
      throw new EpicflowError('usage', '--list shows every epic: leave out --epic');
    }
    const entries = await epicList(await openRepo(io.cwd, opts.repo));
    io.stdout(
      opts.json === true ? `${JSON.stringify(entries, null, 2)}\n` : renderEpicList(entries),
    );
    return 0;
  }
  const found = await epicFolder(io.cwd, opts);
  if (found.kind === 'none') {
    io.stdout(`${found.message}\n`);
    return 0;
  }
  const { repo, state, epic } = found;
  const input = await loadEpicReport(new FileStateStore(state), gitPort(repo), {
    now: () => new Date(),
  });
  if (input === null) {
    if (opts.json === true) throw new EpicflowError('usage', `no board for epic "${epic}" yet`);
    io.stdout(`no board for epic "${epic}" yet\n`);
    return 0;
  }
  const report = buildReportJson(input);
  if (opts.json === true) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else if (io.isTTY) io.stdout(renderBoard(input));
  else io.stdout(plainLines(report).join(''));
  if (opts.json !== true) io.stdout(await logLines(state));
  return 0;
}
