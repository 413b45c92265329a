/**
 * A story's `readFirst` anchors reach its coder's prompt as the files to read first; an
 * anchor outside the repository, through a symbolic link or with no tracked file under it
 * is dropped, and the run says so once per anchor.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  makeRepo,
  prompts,
  record,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const plan = (readFirst: string[]): string =>
  [
    '# Test epic',
    '',
    '```epicflow',
    'stories:',
    '  - id: s',
    '    title: Story s',
    '    description: Build s.',
    '    owns: ["src/s.txt"]',
    `    readFirst: ${JSON.stringify(readFirst)}`,
    '```',
    '',
  ].join('\n');

describe('readFirst', () => {
  it('shows the safe, tracked anchors first and drops the others with a note', async () => {
    repo = makeRepo({ 'README.md': 'x\n', 'docs/guide.md': '# Guide\n' });
    symlinkSync('docs', join(repo.dir, 'linked'));
    const coder = scriptedCoder(repo, 'coder', {
      '*': { '*': { write: { 'src/s.txt': 'done\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'coder', command: coder }], gates: ['true'] }),
    );
    repo.commit('config and link');
    // In the checkout, but not committed: the story's tree does not have it.
    repo.write('untracked.md', 'not committed\n');
    const result = await run(
      repo,
      plan(['docs/guide.md', '../outside.md', 'linked/guide.md', 'untracked.md', 'docs/']),
    );
    expect(result.code).toBe(0);
    expect(record(repo, 's')).toMatchObject({ status: 'done' });
    const prompt = prompts(repo, 'coder')[0]?.prompt ?? '';
    expect(prompt).toContain(
      'Read these first, before you change anything (the plan points you to them):\n- `docs/guide.md`\n- `docs`\n',
    );
    expect(prompt).not.toContain('linked/guide.md');
    expect(result.stdout).toContain(
      '[s] note: readFirst `../outside.md` dropped: outside the repository',
    );
    expect(result.stdout).toContain(
      '[s] note: readFirst `linked/guide.md` dropped: through a symbolic link',
    );
    expect(result.stdout).toContain(
      '[s] note: readFirst `untracked.md` dropped: no tracked file there',
    );
  });
});
