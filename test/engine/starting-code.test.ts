import { afterEach, describe, expect, it } from '@jest/globals';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  prompts,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const SERVER = 'export function listen(port: number): void {\n  console.log(port);\n}\n';

/** A repository whose read paths hold code, a secret file and a link out of the repository. */
function setUp(extra = ''): string {
  repo = makeRepo({
    'README.md': '# shop\n',
    'src/server.ts': SERVER,
    'config/app.json': '{ "currency": "EUR" }\n',
    'config/.env': 'STRIPE_KEY=sk_live_do_not_show\n',
    'src/pay/index.ts': 'export const pay = "v0";\n',
  });
  const outside = join(repo.tmp, 'outside-secret.txt');
  writeFileSync(outside, 'OUTSIDE-THE-REPOSITORY\n');
  symlinkSync(outside, join(repo.dir, 'config/outside.txt'));
  repo.commit('a link out of the repository');
  // The first turn writes a version the gate refuses; the second fixes it.
  const coder = scriptedCoder(repo, 'coder', {
    pay: {
      '1': { write: { 'src/pay/index.ts': 'export const pay = "v1";\n' } },
      '2': { write: { 'src/pay/index.ts': 'export const pay = "v2";\n' } },
    },
  });
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [{ id: 'bot', command: coder }],
      gates: ['! grep -q v1 src/pay/index.ts'],
      extra,
    }),
  );
  repo.commit('config');
  return planMarkdown([{ id: 'pay', owns: ['src/pay'], reads: ['src/server.ts', 'config'] }]);
}

describe('the code a story starts from, in its first coder turn', () => {
  it('shows its reads and its own files as committed, never a secret file nor what a link points to', async () => {
    const plan = setUp();
    const r = await run(repo, plan);
    expect(r.code).toBe(0);
    const [first, second] = prompts(repo, 'coder').map((p) => p.prompt);
    expect(first).toContain('## The code you start from');
    expect(first).toContain(`#### \`src/server.ts\`\n\`\`\`ts\n${SERVER}\`\`\``);
    expect(first).toContain('#### `config/app.json`\n```json\n{ "currency": "EUR" }\n```');
    expect(first).toContain('#### `src/pay/index.ts`\n```ts\nexport const pay = "v0";\n```');
    expect(first).not.toContain('sk_live_do_not_show');
    expect(first).not.toContain('config/.env');
    expect(first).not.toContain('OUTSIDE-THE-REPOSITORY');
    expect(first).toContain('- `config/outside.txt` (a symbolic link)');
    expect(r.stdout).toMatch(
      /\[pay\] starting code: 3 files shown, [\d,]+ characters \(~[\d,]+ tokens\), 1 skipped/,
    );
    // Once the first turn committed, the files shown are no longer the branch's: left out.
    expect(second).toContain('## The gates failed');
    expect(second).not.toContain('## The code you start from');
  });

  it('is left out with a budget of 0', async () => {
    const plan = setUp('prompt: { startingCode: { budget: 0 } }');
    const r = await run(repo, plan);
    expect(r.code).toBe(0);
    expect(prompts(repo, 'coder')[0]?.prompt).not.toContain('## The code you start from');
    expect(r.stdout).not.toContain('starting code:');
  });
});
