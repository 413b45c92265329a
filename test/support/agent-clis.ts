/**
 * The real agent CLIs some tests run (the executor contract tests, planning and a run with
 * the real codex and claude, a new user's first run): codex, Claude Code, the Gemini CLI and
 * opencode. epicflow never imports them, and together they unpack to about 1.1 GB, so they are
 * not devDependencies (the root `npm ci` would unpack them in every clone). Their versions are
 * pinned in `test/agent-clis/package.json` and its own `package-lock.json`; the first test that
 * needs one installs them with `npm ci` (install scripts on: opencode's postinstall puts its
 * binary in place, Claude Code's its own) into the tests' cache folder,
 * `testCacheDir('agent-clis')/<key>` (`~/.cache/epicflow/agent-clis/<key>/` by default), where
 * `<key>` is a hash of those two files: every clone of the same pins on this machine shares
 * one install, and a changed pin installs anew beside it (an install unused for a day is
 * removed when another is made). Deleting the folder forces a reinstall on the next run.
 */
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { madeOnce, ROOT } from './built-package.js';
import { testCacheDir } from './cache-dir.js';

export type AgentCli = 'codex' | 'claude' | 'gemini' | 'opencode';

/** The npm package behind each CLI (its bin has the CLI's name). */
const PACKAGES: Readonly<Record<AgentCli, string>> = {
  codex: '@openai/codex',
  claude: '@anthropic-ai/claude-code',
  gemini: '@google/gemini-cli',
  opencode: 'opencode-ai',
};

/**
 * Long enough for a cold install (`beforeAll`'s timeout in the files that need a CLI): 16–27 s
 * on the 2-core development machine, with npm's own cache empty or warm; more on a slow network.
 */
export const AGENT_CLIS_INSTALL_MS = 300_000;

const SOURCE = join(ROOT, 'test/agent-clis');
const FILES = ['package.json', 'package-lock.json'] as const;
const CACHE = testCacheDir('agent-clis');
const INSTALL = ['ci', '--no-audit', '--no-fund'];

/**
 * What went wrong in a child process, in one line the test failure can show: npm says what
 * failed first (`npm error code …`) and where its log is last.
 */
function reason(e: unknown): string {
  const err = e as { shortMessage?: string; stderr?: string; message?: string };
  const lines = (err.stderr ?? '').trim().split('\n');
  const stderr = (lines.length > 6 ? [...lines.slice(0, 4), '…', ...lines.slice(-2)] : lines)
    .join(' | ')
    .trim();
  return [err.shortMessage ?? err.message ?? String(e), stderr].filter((s) => s !== '').join(': ');
}

function binIn(dir: string, name: AgentCli): string {
  return join(dir, 'node_modules', '.bin', name);
}

/** The pinned version of each CLI, from `test/agent-clis/package.json`. */
async function pinned(): Promise<Record<AgentCli, string>> {
  const manifest = JSON.parse(await readFile(join(SOURCE, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const versions = {} as Record<AgentCli, string>;
  for (const [name, pkg] of Object.entries(PACKAGES) as [AgentCli, string][]) {
    const version = manifest.dependencies[pkg];
    if (version === undefined) throw new Error(`test/agent-clis/package.json does not pin ${pkg}`);
    versions[name] = version;
  }
  return versions;
}

/**
 * `npm ci` of the pinned CLIs in `scratch` (a folder beside the cache entry, renamed into
 * place by `madeOnce` once this returns), then each CLI's `--version` checked against its
 * pin: an install whose postinstall did not run (opencode's bin is then a stub that exits 1)
 * is never marked complete.
 */
async function install(scratch: string): Promise<void> {
  const retry =
    'Run the test again to retry (nothing of a failed install is kept), or try the same install ' +
    'by hand: `cd test/agent-clis && npm ci --no-audit --no-fund` (then delete its node_modules).';
  try {
    for (const file of FILES) await copyFile(join(SOURCE, file), join(scratch, file));
    try {
      await execa('npm', INSTALL, { cwd: scratch });
    } catch (e) {
      throw new Error(
        `could not install the agent CLIs of test/agent-clis/package-lock.json (\`npm ${INSTALL.join(' ')}\` in ${scratch}): ${reason(e)}. ${retry}`,
      );
    }
    // A home of its own: a CLI's first start may write its settings there.
    const home = await mkdtemp(join(scratch, '.home-'));
    try {
      const env = {
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_DATA_HOME: join(home, '.local/share'),
        XDG_STATE_HOME: join(home, '.local/state'),
        XDG_CACHE_HOME: join(home, '.cache'),
      };
      for (const [name, version] of Object.entries(await pinned()) as [AgentCli, string][]) {
        const bin = binIn(scratch, name);
        let stdout: string;
        try {
          ({ stdout } = await execa(bin, ['--version'], { env, timeout: 60_000 }));
        } catch (e) {
          throw new Error(
            `the agent CLIs installed from test/agent-clis/package-lock.json in ${scratch}, but \`${name} --version\` failed: ${reason(e)}. ${retry}`,
          );
        }
        if (!stdout.includes(version)) {
          throw new Error(
            `\`${name} --version\` printed ${JSON.stringify(stdout.trim())}, expected ${PACKAGES[name]} ${version} (test/agent-clis/package.json). ${retry}`,
          );
        }
      }
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  } catch (e) {
    // Nothing half-made is left behind (`madeOnce` keeps a failed build's scratch folder).
    await rm(scratch, { recursive: true, force: true });
    throw e;
  }
}

let installed: Promise<string> | undefined;

/** The folder holding the installed CLIs (`node_modules/.bin/<name>`), installed when needed. */
function agentClis(): Promise<string> {
  installed ??= (async () => {
    const hash = createHash('sha256');
    for (const file of FILES) hash.update(await readFile(join(SOURCE, file))).update('\0');
    return madeOnce(CACHE, hash.digest('hex').slice(0, 16), install);
  })();
  return installed;
}

/**
 * The absolute path of a real agent CLI's bin (`<install>/node_modules/.bin/<name>`),
 * installing the pinned CLIs first when this machine has no complete install of them. Throws
 * with what failed and how to retry: a test that needs a CLI fails, it is never skipped.
 */
export async function agentCliBin(name: AgentCli): Promise<string> {
  const dir = await agentClis();
  const bin = binIn(dir, name);
  if (!existsSync(bin)) {
    throw new Error(
      `${bin} is missing from the installed agent CLIs: delete ${dir} (\`rm -rf ${dir}\`) and run the test again to install them anew`,
    );
  }
  return bin;
}
