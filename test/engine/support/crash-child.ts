/**
 * Runs `epicflow run` in a child process and kills itself with SIGKILL at the
 * lifecycle point named by EPICFLOW_TEST_CRASH_AT (`<point>` or `<point>:<story>`).
 * The environment variable is read here, in the test's entry, never by epicflow.
 */
import { startProcessesWith } from '../../../src/adapters/process/starter.js';
import { runCommand } from '../../../src/cli/commands/run.js';
import { renderFailure } from '../../../src/cli/context.js';
import { startFromHelper } from '../../support/process-starter.js';

// Its processes start from the tests' small helper, as the workers' do (docs/testing.md,
// "Processes started from a small helper"); a crash leaves them as a killed Node process would.
startProcessesWith(startFromHelper);

const [file, repo] = process.argv.slice(2) as [string, string];
const [point, story] = (process.env.EPICFLOW_TEST_CRASH_AT ?? '').split(':');

const io = {
  stdout: (s: string) => process.stdout.write(s),
  stderr: (s: string) => process.stderr.write(s),
  cwd: process.cwd(),
  isTTY: false,
};
const code = await runCommand(
  // As the in-process runs of the tests: outside the kernel sandbox, which hides the
  // scripted coder's prompt log beside the repository.
  { file, repo, agentUser: false, sandbox: false },
  io,
  {
    onCheckpoint: (at, id) => {
      if (at === point && (story === undefined || story === id))
        process.kill(process.pid, 'SIGKILL');
    },
  },
  // What `main` does with a command's error: the one rendering, the exit code.
).catch((e: unknown) => renderFailure(io, e));
process.exitCode = code;
