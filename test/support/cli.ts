/** The CLI's entry run in-process, as a user at a terminal would call it (not a TTY). */
import { main } from '../../src/cli/program.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function epicflow(
  argv: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main([...argv], {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    readStdin: async () => '',
    cwd,
    env,
  });
  return { code, stdout, stderr };
}
