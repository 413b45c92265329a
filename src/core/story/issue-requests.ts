/**
 * What a coder may ask for on its story's sub-issue (docs/config.md, `issueTools`): labels
 * added or removed and people assigned. A coder's reply may hold lines
 *
 *     add-label: needs-docs, ui
 *     remove-label: wip
 *     assign: octocat
 *
 * (a leading `-` or `*` and backticks around a name are tolerated). The coder is untrusted:
 * a request is only a wish, kept when the repository's `issueTools` allows that very label or
 * login, dropped with a note saying what and why when not. The work job records what it kept;
 * the publish job decides again from the configuration it read itself, and applies it.
 */
import type { IssueToolsConfig } from '../config/types.js';
import { oneLineText } from '../epic/sanitize.js';
import type { IssueRequests } from '../model.js';

const LINE = /^\s*[-*]?\s*(add-label|remove-label|assign)\s*:\s*(.*?)\s*$/i;

/** GitHub's longest label name; a longer "name" is no label (and no login is longer). */
const MAX_NAME = 50;

/** No request at all. */
const NONE: IssueRequests = { addLabels: [], removeLabels: [], assignees: [] };

function names(list: string): string[] {
  return list
    .split(',')
    .map((n) =>
      n
        .trim()
        .replace(/^[`"']+|[`"']+$/g, '')
        .trim(),
    )
    .filter((n) => n !== '');
}

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
const without = (list: readonly string[], name: string): string[] =>
  list.filter((n) => !same(n, name));
const withName = (list: readonly string[], name: string): string[] => [
  ...without(list, name),
  name,
];

/** The requests of one reply; undefined when it makes none. A later line wins over an earlier one. */
export function parseIssueRequests(finalMessage: string): IssueRequests | undefined {
  let out = NONE;
  let any = false;
  for (const line of finalMessage.split('\n')) {
    const m = LINE.exec(line);
    if (m?.[1] === undefined) continue;
    any = true;
    const kind = m[1].toLowerCase();
    for (const name of names(m[2] ?? '')) out = withRequest(out, kind, name);
  }
  return any ? out : undefined;
}

function withRequest(r: IssueRequests, kind: string, name: string): IssueRequests {
  if (kind === 'assign') {
    const login = name.replace(/^@/, '');
    return login === '' ? r : { ...r, assignees: withName(r.assignees, login) };
  }
  // Adding and removing one label: the later request stands.
  return kind === 'add-label'
    ? { ...r, addLabels: withName(r.addLabels, name), removeLabels: without(r.removeLabels, name) }
    : { ...r, removeLabels: withName(r.removeLabels, name), addLabels: without(r.addLabels, name) };
}

/** An earlier turn's requests with a later turn's over them (the later stands on a conflict). */
export function mergeIssueRequests(
  earlier: IssueRequests | undefined,
  later: IssueRequests,
): IssueRequests {
  let out = earlier ?? NONE;
  for (const name of later.addLabels) out = withRequest(out, 'add-label', name);
  for (const name of later.removeLabels) out = withRequest(out, 'remove-label', name);
  for (const name of later.assignees) out = withRequest(out, 'assign', name);
  return out;
}

/** True when nothing is asked for (an empty request is a no-op). */
export function noIssueRequests(r: IssueRequests): boolean {
  return r.addLabels.length === 0 && r.removeLabels.length === 0 && r.assignees.length === 0;
}

interface IssueRequestDecision {
  /** What may be applied, named as the configuration spells it. */
  readonly allowed: IssueRequests;
  /** One note per request dropped: what was asked and why it was not kept. */
  readonly dropped: readonly string[];
}

/** An untrusted name as a note shows it: one line, cut, no mention. */
function shown(name: string): string {
  const line = oneLineText(name).replace(/@/g, '');
  return JSON.stringify(line.length > MAX_NAME ? `${line.slice(0, MAX_NAME)}…` : line);
}

/**
 * The requests `allow` lets through, and a note for each one it does not: a label or login not
 * in the list (compared without case) is dropped, and with empty lists everything is.
 */
export function decideIssueRequests(
  requests: IssueRequests,
  allow: IssueToolsConfig,
): IssueRequestDecision {
  const dropped: string[] = [];
  const pick = (
    asked: readonly string[],
    list: readonly string[],
    what: string,
    field: string,
  ): string[] => {
    const kept: string[] = [];
    for (const name of asked) {
      const match = name.length <= MAX_NAME ? list.find((a) => same(a, name)) : undefined;
      if (match !== undefined) {
        if (!kept.includes(match)) kept.push(match);
        continue;
      }
      const why =
        list.length === 0
          ? `issueTools.${field} is empty`
          : `it is not in issueTools.${field} (${list.join(', ')})`;
      dropped.push(`issue tools: dropped the request to ${what} ${shown(name)}: ${why}`);
    }
    return kept;
  };
  const allowed: IssueRequests = {
    addLabels: pick(requests.addLabels, allow.labels, 'add the label', 'labels'),
    removeLabels: pick(requests.removeLabels, allow.labels, 'remove the label', 'labels'),
    assignees: pick(requests.assignees, allow.assignees, 'assign', 'assignees'),
  };
  return { allowed, dropped };
}
