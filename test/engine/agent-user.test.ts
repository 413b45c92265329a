/**
 * `epicflow run --agent-user USER`: the agent, setup and gates run as that
 * unprivileged user (the tests run as root, so it can be had here); nothing it
 * starts outlives its step, not even a process that left its group and emptied
 * its environment; the merge is epicflow's, as epicflow's own user.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  configYaml,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  run,
  showFile,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('a local run with --agent-user', () => {
  it('runs the agent and the gates as that user and ends what the agent left behind', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const pid = join(repo.tmp, 'left-behind.pid');
    const later = join(repo.tmp, 'left-behind.txt');
    const agent = [
      'sh',
      '-c',
      [
        'mkdir -p src',
        'id -un > src/agent.txt',
        // Out of its group and without the marker: only its uid gives it away.
        `setsid env -i sh -c 'sleep 2; id -un > ${later}' >/dev/null 2>&1 & echo $! > src/left-behind.pid`,
      ].join('; '),
    ];
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: agent }],
        gates: ['test "$(id -un)" != root'],
      }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src'] }]), {
      agentUser: 'epicflow-agent',
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(epicMerges(repo)).toEqual(['Merge story s: Story s']);
    expect(showFile(repo, 'epic/epic', 'src/agent.txt')).toMatch(/^epicflow-agent(-\d+)?$/);
    // The merge commit is epicflow's own.
    expect(git(repo.dir, 'log', '-1', '--format=%an', 'epic/epic')).not.toMatch(/agent/);
    const left = Number(showFile(repo, 'epic/epic', 'src/left-behind.pid'));
    expect(
      existsSync(`/proc/${left}/status`) &&
        !readFileSync(`/proc/${left}/status`, 'utf8').includes('State:\tZ'),
    ).toBe(false);
    await delay(2500);
    expect(existsSync(later)).toBe(false);
    expect(existsSync(pid)).toBe(false);
  }, 60_000);

  it('refuses a user that is root, before anything is created', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    repo.write('epicflow.yml', configYaml({ executors: [{ id: 'bot', command: ['true'] }] }));
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src'] }]), {
      agentUser: 'root',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "the user root (uid 0) is root or epicflow's own user: untrusted code would run with epicflow's rights",
    );
    expect(git(repo.dir, 'branch', '--list', 'epic/*')).toBe('');
  });
});
