/**
 * The repository's Dockerfile read with `dockerfile-ast` (the parser behind the Docker
 * language server): its stages, the final stage's ENV, USER, CMD and HEALTHCHECK, in the
 * forms a test can act on (argv arrays, variables). No Docker engine runs here; the tests
 * run the image's command and health check as processes instead.
 */
import { readFile } from 'node:fs/promises';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';

export const DOCKERFILE = new URL('../../Dockerfile', import.meta.url);

export interface Stage {
  /** The image of its FROM, as written (`node:${NODE_VERSION}-bookworm-slim`). */
  readonly from: string;
  /** `AS <name>`, or null. */
  readonly name: string | null;
  readonly instructions: readonly Instruction[];
}

export interface ParsedDockerfile {
  readonly stages: readonly Stage[];
  readonly final: Stage;
  /** The final stage's ENV variables. */
  readonly env: Readonly<Record<string, string>>;
  /** The final stage's last USER, or null. */
  readonly user: string | null;
  /** The final stage's CMD in exec (JSON) form. */
  readonly cmd: readonly string[];
  /** The final stage's HEALTHCHECK: its options and its command in exec form. */
  readonly healthcheck: {
    readonly options: Record<string, string>;
    readonly cmd: readonly string[];
  };
  /** Every RUN of the final stage, as written. */
  readonly runs: readonly string[];
}

function keyword(i: Instruction): string {
  return i.getKeyword().toUpperCase();
}

/** An exec-form argument list (`["node", "x"]`), or an error naming the instruction. */
function execForm(text: string, what: string): string[] {
  try {
    const value = JSON.parse(text) as unknown;
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  } catch {
    // reported below
  }
  throw new Error(`${what} is not in exec form (a JSON array of strings): ${text}`);
}

export function parseDockerfile(text: string): ParsedDockerfile {
  const dockerfile = DockerfileParser.parse(text);
  const stages: { from: string; name: string | null; instructions: Instruction[] }[] = [];
  for (const i of dockerfile.getInstructions()) {
    if (keyword(i) === 'FROM') {
      const from = dockerfile
        .getFROMs()
        .find((f) => f.getRange().start.line === i.getRange().start.line);
      stages.push({
        from: from?.getImage() ?? '',
        name: from?.getBuildStage() ?? null,
        instructions: [],
      });
    }
    stages.at(-1)?.instructions.push(i);
  }
  const final = stages.at(-1);
  if (final === undefined) throw new Error('the Dockerfile has no FROM');
  const of = (k: string): Instruction[] => final.instructions.filter((i) => keyword(i) === k);
  const env: Record<string, string> = {};
  for (const e of dockerfile.getENVs()) {
    if (!final.instructions.includes(e)) continue;
    for (const p of e.getProperties()) env[p.getName()] = p.getValue() ?? '';
  }
  const cmd = of('CMD').at(-1);
  if (cmd === undefined) throw new Error('the final stage has no CMD');
  const check = dockerfile
    .getHEALTHCHECKs()
    .filter((h) => final.instructions.includes(h))
    .at(-1);
  if (check === undefined) throw new Error('the final stage has no HEALTHCHECK');
  const content = check.getArgumentsContent() ?? '';
  const sub = /(?:^|\s)CMD\s+(\[[\s\S]*\])\s*$/.exec(content);
  if (!sub?.[1]) throw new Error(`HEALTHCHECK has no CMD in exec form: ${content}`);
  const options = Object.fromEntries(
    check.getFlags().map((f) => [f.getName(), f.getValue() ?? '']),
  );
  return {
    stages,
    final,
    env,
    user: of('USER').at(-1)?.getArgumentsContent() ?? null,
    cmd: execForm(cmd.getArgumentsContent() ?? '', 'CMD'),
    healthcheck: { options, cmd: execForm(sub[1], 'HEALTHCHECK CMD') },
    runs: of('RUN').map((r) => r.getArgumentsContent() ?? ''),
  };
}

export async function readDockerfile(): Promise<ParsedDockerfile> {
  return parseDockerfile(await readFile(DOCKERFILE, 'utf8'));
}
