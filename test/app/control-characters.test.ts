/**
 * An epic whose title and body hold control and bidirectional-override characters (a NUL,
 * an escape, U+202E, an isolate) still starts, and none of those characters reaches a
 * commit message, a branch, a comment, a pull request or a dispatch input.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  botComments,
  dispatched,
  OWNER,
  planBody,
  REPO,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

// eslint-disable-next-line no-control-regex -- control characters are what this test hunts
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

function gitIn(...args: string[]): string {
  return execFileSync('git', ['--git-dir', w.gh.state.repoDir(OWNER, REPO), ...args], {
    encoding: 'utf8',
  });
}

describe('control characters in an epic', () => {
  it('start it anyway, and reach no commit, branch, comment, pull request or dispatch', async () => {
    const title = 'Checkout\u0000 rewrite \u001b[31mred\u202egnp.exe\u2066 done';
    const prose = 'The checkout\u0000 epic \u202eesrever\u202c with a bell\u0007.';
    const epic = await startEpic(
      w,
      title,
      planBody(
        [
          { id: 'api', title: 'Build\u0000 the \u202eAPI' },
          { id: 'ui', dependsOn: ['api'] },
        ],
        prose,
      ),
    );
    expect(dispatched(w.gh, epic)).toEqual(['api#1']);

    const messages = gitIn('log', '--all', '--format=%B%x00');
    expect(messages).toContain(`#${epic}`);
    expect(messages.split('\u0000').join('')).not.toMatch(HIDDEN);
    expect(gitIn('for-each-ref', '--format=%(refname)')).not.toMatch(HIDDEN);
    for (const body of botComments(w, epic)) expect(body).not.toMatch(HIDDEN);
    for (const issue of w.gh.state.issues(OWNER, REPO)) {
      if (issue.number === epic) continue;
      expect(issue.title).not.toMatch(HIDDEN);
      expect(issue.body ?? '').not.toMatch(HIDDEN);
    }
    const pr = w.gh.state.issues(OWNER, REPO).find((i) => i.title.startsWith(`Epic #${epic}:`));
    expect(pr?.title).toBe(`Epic #${epic}: Checkout rewrite [31mredgnp.exe done`);
    for (const d of w.gh.state.dispatches(OWNER, REPO)) {
      expect(JSON.stringify(d.inputs)).not.toMatch(/\\u00|\\u202|\\u206/);
      for (const v of Object.values(d.inputs)) expect(String(v)).not.toMatch(HIDDEN);
    }
  });
});
