import { it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import '../../src/engine/run-epic.js';
import '../../src/cli/program.js';
const ex = promisify(execFile);
it('probe', async () => {
  for (const round of [1, 2]) {
    const t = Date.now();
    for (let i = 0; i < 100; i++) await ex('git', ['--version']);
    console.log(round, (Date.now() - t) / 100, 'ms/spawn', Math.round(process.memoryUsage().rss / 1e6), 'MB');
  }
});
