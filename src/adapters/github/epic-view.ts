/**
 * Everything a decision reads about one epic's progress, in one GraphQL request:
 * the story records and documents on the state branch (with their blob shas, the
 * compare-and-swap tokens), the epic branch's head commit, and the epic's open
 * pull request. Replaces a folder listing, a tree, changed blobs, a ref, a
 * commit and a pull-request listing over REST.
 */
import { boardRead, boardSelection, type BoardRead } from './board-read.js';
import { attempt, isTransient } from './errors.js';
import type { GitHubRepo } from './repo.js';
import type { HeadCommit } from './resources/history.js';
import type { IssueSummary } from './resources/issues.js';
import type { CheckContext, PullChecks } from '../../core/epic/index.js';

export type { HeadCommit };

/** An issue's first comments as the view read them; `complete` when that was all of them. */
export interface CommentListing {
  readonly complete: boolean;
  readonly comments: readonly {
    readonly id: number;
    readonly body: string;
    readonly author: string;
  }[];
}

export interface EpicView {
  /** Story files (`<id>.json`) by file name: blob sha and text. */
  readonly stories: ReadonlyMap<string, { readonly sha: string; readonly text: string }>;
  /** `epic.json`, when there is one. */
  readonly epicDoc: { readonly sha: string; readonly text: string } | undefined;
  /** Blob sha of `report.md`; null when there is none. */
  readonly reportSha: string | null;
  /** The text of `report.md`, when there is one and GitHub gave it whole. */
  readonly reportText?: string | undefined;
  /** `planning.json` (the planning record), when there is one. */
  readonly planningDoc?: { readonly sha: string; readonly text: string } | undefined;
  /** `land.json` (the epic's landings), when there is one. */
  readonly landDoc?: { readonly sha: string; readonly text: string } | undefined;
  /** `roster.json` (the executors' shared roster), when there is one. */
  readonly rosterDoc?: { readonly sha: string; readonly text: string } | undefined;
  /** The epic branch's head; null when the branch does not exist. */
  readonly head: HeadCommit | null;
  readonly pr:
    | {
        readonly number: number;
        readonly draft: boolean;
        readonly nodeId: string;
        /** Its first comments (the report comment is among them). */
        readonly comments?: CommentListing;
        /** The check runs and commit statuses of its head commit (the first 100 of them). */
        readonly checks?: PullChecks;
      }
    | undefined;
  /** The epic issue with its labels and sub-issues; undefined when there is no such issue. */
  readonly issue:
    | {
        readonly number: number;
        readonly title: string;
        readonly body: string;
        readonly labels: readonly string[];
        readonly subIssues: readonly IssueSummary[];
        /** Its first comments (the status comment is among them): no listing needed. */
        readonly comments?: CommentListing;
      }
    | undefined;
  /** The configuration file's text on the default branch; null when there is none. */
  readonly configText: string | null;
  /**
   * The board asked for (`board`), with the sub-issues' items and values on it; undefined
   * when none was asked for or it could not be read with the view (the decision then
   * opens it itself, and says why it cannot).
   */
  readonly board?: BoardRead;
}

const query = (
  board: { owner: string; items: string } | undefined,
): string => `query EpicflowEpicView(
  $owner: String!, $name: String!, $stories: String!, $doc: String!, $report: String!, $planning: String!, $land: String!, $roster: String!,
  $epicRef: String!, $head: String!, $base: String!, $epic: Int!, $config: String!
) {
  repository(owner: $owner, name: $name) {
    issue(number: $epic) {
      number title body
      labels(first: 100) { nodes { name } }
      subIssues(first: 100) {
        nodes { number databaseId id title body state author { login } ${board?.items ?? ''} }
      }
      comments(first: 100) { totalCount nodes { databaseId body author { login } } }
    }
    config: object(expression: $config) { ... on Blob { text } }
    stories: object(expression: $stories) {
      ... on Tree { entries { name type oid object { ... on Blob { text } } } }
    }
    doc: object(expression: $doc) { ... on Blob { oid text } }
    planning: object(expression: $planning) { ... on Blob { oid text } }
    land: object(expression: $land) { ... on Blob { oid text } }
    roster: object(expression: $roster) { ... on Blob { oid text } }
    report: object(expression: $report) { oid ... on Blob { text isTruncated } }
    epic: ref(qualifiedName: $epicRef) {
      target { ... on Commit { oid message parents(first: 2) { nodes { oid message } } } }
    }
    pullRequests(headRefName: $head, baseRefName: $base, states: [OPEN], first: 1) {
      nodes {
        number isDraft id
        comments(first: 100) { totalCount nodes { databaseId body author { login } } }
        commits(last: 1) { nodes { commit { statusCheckRollup {
          state
          contexts(first: 100) {
            totalCount
            nodes {
              __typename
              ... on CheckRun { name status conclusion }
              ... on StatusContext { context state }
            }
          }
        } } } }
      }
    }
  }
  ${board?.owner ?? ''}
}`;

interface RawSub {
  readonly number: number;
  readonly databaseId: number | null;
  readonly id: string;
  readonly title: string;
  readonly body: string;
  readonly state: string;
  readonly author: { readonly login: string } | null;
}

interface RawComments {
  readonly totalCount: number;
  readonly nodes: readonly {
    readonly databaseId: number | null;
    readonly body: string;
    readonly author: { readonly login: string } | null;
  }[];
}

interface RawCommitChecks {
  readonly statusCheckRollup: {
    readonly state: string;
    readonly contexts: {
      readonly totalCount: number;
      readonly nodes: readonly (
        | {
            readonly __typename: 'CheckRun';
            name: string;
            status: string;
            conclusion: string | null;
          }
        | { readonly __typename: 'StatusContext'; context: string; state: string }
        | null
      )[];
    };
  } | null;
}

/** The head commit's checks; a commit without any has none to wait for. */
function headChecks(raw: RawCommitChecks): PullChecks {
  const rollup = raw.statusCheckRollup;
  if (rollup === null) return { contexts: [], total: 0, overall: null };
  const contexts = rollup.contexts.nodes.flatMap((n): CheckContext[] => {
    if (n === null) return [];
    return n.__typename === 'CheckRun'
      ? [{ kind: 'check-run', name: n.name, status: n.status, conclusion: n.conclusion }]
      : [{ kind: 'status', context: n.context, state: n.state }];
  });
  return { contexts, total: rollup.contexts.totalCount, overall: rollup.state };
}

function listing(raw: RawComments): CommentListing {
  const comments = raw.nodes.flatMap((c) =>
    c.databaseId === null
      ? []
      : [{ id: c.databaseId, body: c.body, author: c.author?.login ?? '' }],
  );
  return { complete: raw.totalCount <= raw.nodes.length, comments };
}

interface Answer {
  readonly boardOwner?: unknown;
  readonly repository: {
    readonly issue: {
      readonly number: number;
      readonly title: string;
      readonly body: string;
      readonly labels: { readonly nodes: readonly { readonly name: string }[] } | null;
      readonly subIssues: { readonly nodes: readonly RawSub[] };
      readonly comments?: RawComments;
    } | null;
    readonly config: { readonly text?: string | null } | null;
    readonly stories: {
      readonly entries?: readonly {
        readonly name: string;
        readonly type: string;
        readonly oid: string;
        readonly object: { readonly text?: string | null } | null;
      }[];
    } | null;
    readonly doc: { readonly oid?: string; readonly text?: string | null } | null;
    readonly planning?: { readonly oid?: string; readonly text?: string | null } | null;
    readonly land?: { readonly oid?: string; readonly text?: string | null } | null;
    readonly roster?: { readonly oid?: string; readonly text?: string | null } | null;
    readonly report: {
      readonly oid: string;
      readonly text?: string | null;
      readonly isTruncated?: boolean;
    } | null;
    readonly epic: {
      readonly target: {
        readonly oid?: string;
        readonly message?: string;
        readonly parents?: {
          readonly nodes: readonly { readonly oid: string; readonly message?: string }[];
        };
      } | null;
    } | null;
    readonly pullRequests: {
      readonly nodes: readonly {
        number: number;
        isDraft: boolean;
        id: string;
        comments?: RawComments;
        commits?: { readonly nodes: readonly { readonly commit: RawCommitChecks }[] };
      }[];
    };
  } | null;
}

export async function readEpicView(
  repo: GitHubRepo,
  input: {
    readonly stateBranch: string;
    /** `epics/<n>` */
    readonly folder: string;
    readonly epicBranch: string;
    readonly baseBranch: string;
    /** The epic issue's number. */
    readonly epic: number;
    /** Path of the configuration file on the default branch. */
    readonly configPath: string;
    /** The project board (URL) whose items of the sub-issues to read along, when one is expected. */
    readonly board?: string | undefined;
  },
): Promise<EpicView> {
  const at = (path: string): string => `${input.stateBranch}:${input.folder}/${path}`;
  const read = (board: string | undefined): Promise<Answer> =>
    attempt(`read the state of ${input.folder} in ${repo.fullName}`, 'Contents: read', () =>
      repo.octokit.graphql<Answer>(query(board === undefined ? undefined : boardSelection(board)), {
        owner: repo.owner,
        name: repo.repo,
        stories: at('stories'),
        doc: at('epic.json'),
        land: at('land.json'),
        roster: at('roster.json'),
        report: at('report.md'),
        planning: at('planning.json'),
        epicRef: `refs/heads/${input.epicBranch}`,
        head: input.epicBranch,
        base: input.baseBranch,
        epic: input.epic,
        config: `${input.baseBranch}:${input.configPath}`,
      }),
    );
  const board = input.board;
  let data: Answer;
  let withBoard = board !== undefined;
  try {
    data = await read(board);
  } catch (e) {
    // A board the token cannot read fails the whole request: read without it, and let the
    // decision's own opening of the board say what is wrong with it.
    if (board === undefined || isTransient(e)) throw e;
    withBoard = false;
    data = await read(undefined);
  }
  const r = data.repository;
  const stories = new Map<string, { sha: string; text: string }>();
  for (const e of r?.stories?.entries ?? []) {
    const text = e.object?.text;
    if (e.type !== 'blob' || typeof text !== 'string') continue;
    stories.set(e.name, { sha: e.oid, text });
  }
  const doc = r?.doc;
  const target = r?.epic?.target;
  const pr = r?.pullRequests.nodes[0];
  const issue = r?.issue;
  const config = r?.config?.text;
  return {
    issue:
      issue == null
        ? undefined
        : {
            number: issue.number,
            title: issue.title,
            body: issue.body,
            labels: (issue.labels?.nodes ?? []).map((l) => l.name),
            subIssues: issue.subIssues.nodes.map((n): IssueSummary => ({
              number: n.number,
              id: n.databaseId ?? 0,
              nodeId: n.id,
              title: n.title,
              body: n.body,
              state: n.state === 'CLOSED' ? 'closed' : 'open',
              author: n.author?.login ?? '',
            })),
            ...(issue.comments === undefined ? {} : { comments: listing(issue.comments) }),
          },
    configText: typeof config === 'string' ? config : null,
    ...viewBoard(withBoard ? board : undefined, data.boardOwner, issue?.subIssues.nodes ?? []),
    stories,
    epicDoc:
      typeof doc?.oid === 'string' && typeof doc.text === 'string'
        ? { sha: doc.oid, text: doc.text }
        : undefined,
    reportSha: r?.report?.oid ?? null,
    ...(typeof r?.report?.text === 'string' && r.report.isTruncated !== true
      ? { reportText: r.report.text }
      : {}),
    planningDoc:
      typeof r?.planning?.oid === 'string' && typeof r.planning.text === 'string'
        ? { sha: r.planning.oid, text: r.planning.text }
        : undefined,
    landDoc:
      typeof r?.land?.oid === 'string' && typeof r.land.text === 'string'
        ? { sha: r.land.oid, text: r.land.text }
        : undefined,
    rosterDoc:
      typeof r?.roster?.oid === 'string' && typeof r.roster.text === 'string'
        ? { sha: r.roster.oid, text: r.roster.text }
        : undefined,
    head:
      typeof target?.oid === 'string'
        ? {
            sha: target.oid,
            message: target.message ?? '',
            parents: (target.parents?.nodes ?? []).map((p) => p.oid),
            parentMessages: new Map(
              (target.parents?.nodes ?? []).flatMap((p) =>
                typeof p.message === 'string' ? [[p.oid, p.message] as const] : [],
              ),
            ),
          }
        : null,
    pr:
      pr === undefined
        ? undefined
        : {
            number: pr.number,
            draft: pr.isDraft,
            nodeId: pr.id,
            ...(pr.comments === undefined ? {} : { comments: listing(pr.comments) }),
            ...prChecks(pr.commits),
          },
  };
}

/** The head commit's checks, when the pull request has a commit (it always has, open). */
function prChecks(
  commits: { readonly nodes: readonly { readonly commit: RawCommitChecks }[] } | undefined,
): {
  checks?: PullChecks;
} {
  const head = commits?.nodes.at(-1);
  return head === undefined ? {} : { checks: headChecks(head.commit) };
}

function viewBoard(
  url: string | undefined,
  owner: unknown,
  subIssues: readonly RawSub[],
): { board?: BoardRead } {
  if (url === undefined) return {};
  const read = boardRead(url, owner, subIssues);
  return read === undefined ? {} : { board: read };
}
