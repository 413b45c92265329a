/**
 * The toolchains a repository's setup and gates call (`uv`, `go`, `cargo`, `pnpm`, …),
 * how each is installed, and the Node version `.nvmrc`, `.node-version` or package.json's
 * `engines.node` asks for. Pure: the shell finds which programs are on PATH and which
 * Node runs; `doctor` judges.
 */

/** Programs a setup or gate command may start with, and the command that installs each. */
export const TOOLCHAIN_INSTALL: Readonly<Record<string, string>> = {
  node: 'nvm install --lts,, or see https://nodejs.org/en/download',
  npm: 'nvm install --lts (npm comes with Node),, or see https://nodejs.org/en/download',
  npx: 'nvm install --lts (npx comes with Node),, or see https://nodejs.org/en/download',
  pnpm: 'corepack enable pnpm, or npm install -g pnpm',
  yarn: 'corepack enable yarn, or npm install -g yarn',
  bun: 'curl -fsSL https://bun.sh/install | bash',
  python3: 'apt-get install -y python3 python3-pip, or see https://www.python.org/downloads/',
  python: 'apt-get install -y python-is-python3, or see https://www.python.org/downloads/',
  uv: 'curl -LsSf https://astral.sh/uv/install.sh | sh, or pipx install uv',
  uvx: 'curl -LsSf https://astral.sh/uv/install.sh | sh, or pipx install uv',
  poetry: 'pipx install poetry',
  pdm: 'pipx install pdm',
  hatch: 'pipx install hatch',
  tox: 'pipx install tox',
  go: 'apt-get install -y golang-go, or see https://go.dev/dl/',
  cargo: 'curl --proto =https --tlsv1.2 -sSf https://sh.rustup.rs | sh',
  make: 'apt-get install -y make',
};

/** The programs the Node version requirement concerns. */
const NODE_PROGRAMS = new Set(['node', 'npm', 'npx', 'pnpm', 'yarn']);

/**
 * The first word of each simple command of a shell line (`A=1 uv run x && go test` →
 * uv, go): words with a `/` and shell keywords are not looked up.
 */
function programsOf(command: string): string[] {
  const out: string[] = [];
  for (const part of command.split(/&&|\|\||[;|&\n()]/)) {
    const words = part.trim().split(/\s+/);
    let i = 0;
    while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] ?? '')) i++;
    const word = words[i];
    if (word !== undefined && word !== '' && !word.includes('/')) out.push(word);
  }
  return out;
}

/** A known toolchain program a command calls. */
export interface NeededProgram {
  readonly program: string;
  /** The setup or gate command that calls it. */
  readonly command: string;
}

/** The known toolchain programs these commands call, each once (first caller). */
export function neededPrograms(commands: readonly string[]): NeededProgram[] {
  const seen = new Map<string, string>();
  for (const command of commands) {
    for (const program of programsOf(command)) {
      if (TOOLCHAIN_INSTALL[program] !== undefined && !seen.has(program))
        seen.set(program, command);
    }
  }
  return [...seen].map(([program, command]) => ({ program, command }));
}

/** Whether any of these programs runs on Node. */
export function needsNode(programs: readonly NeededProgram[]): boolean {
  return programs.some((p) => NODE_PROGRAMS.has(p.program));
}

type Version = readonly [number, number, number];

function parseVersion(text: string): { v: Version; parts: number } | undefined {
  const m = /^v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$/.exec(text.trim());
  if (m === null) return undefined;
  const num = (s: string | undefined): number | undefined =>
    s === undefined || s === 'x' || s === '*' ? undefined : Number(s);
  const [a, b, c] = [Number(m[1]), num(m[2]), num(m[3])];
  const parts = b === undefined ? 1 : c === undefined ? 2 : 3;
  return { v: [a, b ?? 0, c ?? 0], parts };
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** The version just above a partial one's range (`20` → 21.0.0, `20.1` → 20.2.0). */
function above(v: Version, parts: number): Version {
  if (parts === 1) return [v[0] + 1, 0, 0];
  if (parts === 2) return [v[0], v[1] + 1, 0];
  return [v[0], v[1], v[2] + 1];
}

function satisfiesOne(version: Version, comparator: string): boolean | undefined {
  const m = /^(>=|<=|>|<|=|\^|~)?\s*(.+)$/.exec(comparator);
  const parsed = m?.[2] === undefined ? undefined : parseVersion(m[2]);
  if (m === null || parsed === undefined) return undefined;
  const { v, parts } = parsed;
  const c = compare(version, v);
  switch (m[1]) {
    case '>=':
      return c >= 0;
    case '>':
      return parts === 3 ? c > 0 : compare(version, above(v, parts)) >= 0;
    case '<=':
      return parts === 3 ? c <= 0 : compare(version, above(v, parts)) < 0;
    case '<':
      return c < 0;
    case '^':
      return c >= 0 && compare(version, v[0] > 0 ? [v[0] + 1, 0, 0] : above(v, parts)) < 0;
    case '~':
      return c >= 0 && compare(version, above(v, Math.min(parts, 2))) < 0;
    default:
      return c >= 0 && compare(version, above(v, parts)) < 0;
  }
}

/**
 * Whether Node `version` (`v22.3.0`) meets a requirement (`>=20`, `^18.17 || >=20`,
 * `22`, `v20.11.0`); undefined when the requirement is not one of these forms
 * (`lts/*`, `node`), which is not checked.
 */
export function nodeSatisfies(version: string, requirement: string): boolean | undefined {
  const current = parseVersion(version);
  if (current === undefined) return undefined;
  let any = false;
  for (const alternative of requirement.split('||')) {
    const comparators = alternative
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .filter((c) => c !== '');
    if (comparators.length === 0) return undefined;
    let all = true;
    for (const c of comparators) {
      const ok = satisfiesOne(current.v, c);
      if (ok === undefined) return undefined;
      all &&= ok;
    }
    any ||= all;
  }
  return any;
}

/** A Node version requirement and the file that states it. */
export interface NodeRequirement {
  readonly range: string;
  readonly from: string;
}

/** The requirements `.nvmrc`, `.node-version` and package.json's `engines.node` state. */
export function nodeRequirements(texts: ReadonlyMap<string, string>): NodeRequirement[] {
  const out: NodeRequirement[] = [];
  for (const file of ['.nvmrc', '.node-version']) {
    const line = texts
      .get(file)
      ?.split('\n')
      .map((l) => l.replace(/#.*/, '').trim())
      .find((l) => l !== '');
    // A pinned patch release (`v20.11.0`) asks for that Node line: its major is checked.
    if (line !== undefined)
      out.push({ range: /^v?(\d+)(\.\d+)*$/.exec(line)?.[1] ?? line, from: file });
  }
  const pkg = texts.get('package.json');
  if (pkg !== undefined) {
    try {
      const engines = (JSON.parse(pkg) as { engines?: { node?: unknown } }).engines;
      if (typeof engines?.node === 'string' && engines.node.trim() !== '')
        out.push({ range: engines.node.trim(), from: 'package.json engines.node' });
    } catch {
      // init names a package.json that is not JSON
    }
  }
  return out;
}
