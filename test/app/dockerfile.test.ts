/**
 * The App's image, checked without a Docker engine: the Dockerfile read by
 * `dockerfile-ast` (test/support/dockerfile.ts). What the image RUNS — its CMD with its
 * ENV, and its HEALTHCHECK command against `/healthz` — is run as processes by
 * test/app/start.test.ts; this file checks how the image is made.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { parseDockerfile, readDockerfile, type ParsedDockerfile } from '../support/dockerfile.js';

/** What a good image of the App needs; each problem as a sentence. */
function problems(d: ParsedDockerfile, startEntry: string): string[] {
  const out: string[] = [];
  if (d.stages.length < 2) out.push('not multi-stage');
  if (!/^node:/.test(d.final.from)) out.push(`final stage is not a node image: ${d.final.from}`);
  const installs = d.runs.filter((r) => /\bnpm (ci|install|i)\b/.test(r));
  if (installs.length === 0) out.push('final stage installs no dependencies');
  for (const r of installs) {
    if (!/\bnpm ci\b/.test(r) || !/--omit=dev\b/.test(r))
      out.push(`final stage install is not "npm ci --omit=dev": ${r}`);
  }
  if (d.user === null || /^(root|0)(:.*)?$/.test(d.user))
    out.push(`final USER is root: ${String(d.user)}`);
  const expected = ['node', 'node_modules/probot/bin/probot.js', 'run', startEntry];
  if (JSON.stringify(d.cmd) !== JSON.stringify(expected)) {
    out.push(`CMD is not npm start's command: ${JSON.stringify(d.cmd)}`);
  }
  if (!d.healthcheck.cmd.some((a) => a.includes('/healthz')))
    out.push('HEALTHCHECK does not ask /healthz');
  if (d.env['NODE_ENV'] !== 'production') out.push('NODE_ENV is not production');
  if (d.env['LOG_FORMAT'] !== 'json') out.push('LOG_FORMAT is not json');
  // probot listens on localhost by default: unreachable from outside a container.
  if (d.env['HOST'] !== '0.0.0.0') out.push('HOST is not 0.0.0.0');
  const copiesSources = d.final.instructions.some(
    (i) =>
      i.getKeyword().toUpperCase() === 'COPY' && /(^|\s)src\b/.test(i.getArgumentsContent() ?? ''),
  );
  if (copiesSources) out.push('final stage copies the sources');
  return out;
}

async function npmStartEntry(): Promise<string> {
  const pkg = JSON.parse(
    await readFile(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as {
    scripts: Record<string, string>;
  };
  const entry = /^probot run (\S+)$/.exec(pkg.scripts['start'] ?? '')?.[1];
  if (entry === undefined) throw new Error(`npm start is not "probot run <entry>"`);
  return entry;
}

describe('Dockerfile', () => {
  it('builds in stages and runs npm start as a non-root user with production dependencies only', async () => {
    const d = await readDockerfile();
    expect(problems(d, await npmStartEntry())).toEqual([]);
    expect(d.stages.map((s) => s.name)).toEqual(['build', null]);
    expect(d.user).toBe('node');
  });

  it("runs probot's own bin, the one `npm start`'s `probot` names", async () => {
    const probot = JSON.parse(
      await readFile(new URL('../../node_modules/probot/package.json', import.meta.url), 'utf8'),
    ) as { bin: Record<string, string> };
    const bin = probot.bin['probot']?.replace(/^\.\//, '');
    expect(`node_modules/probot/${bin ?? ''}`).toBe((await readDockerfile()).cmd[1]);
  });

  it('checks health often enough, with a start period, through /healthz', async () => {
    const { healthcheck } = await readDockerfile();
    expect(Object.keys(healthcheck.options).sort()).toEqual([
      'interval',
      'retries',
      'start-period',
      'timeout',
    ]);
    expect(healthcheck.cmd.slice(0, 2)).toEqual(['node', '-e']);
  });

  it('leaves secrets and local builds out of the build context', async () => {
    const ignored = (await readFile(new URL('../../.dockerignore', import.meta.url), 'utf8'))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(ignored).toEqual(
      expect.arrayContaining(['.git', '.env', 'node_modules', 'lib', 'dist']),
    );
  });
});

describe('the Dockerfile check itself', () => {
  it('names every problem of a single-stage image running as root with dev dependencies', () => {
    const bad = parseDockerfile(
      [
        'FROM node:24',
        'WORKDIR /app',
        'COPY src ./src',
        'RUN npm ci && npx tsc -p tsconfig.build.json',
        'USER root',
        'HEALTHCHECK CMD ["node", "-e", "process.exit(0)"]',
        'CMD ["npm", "start"]',
        '',
      ].join('\n'),
    );
    expect(problems(bad, './lib/app/index.js')).toEqual([
      'not multi-stage',
      'final stage install is not "npm ci --omit=dev": npm ci && npx tsc -p tsconfig.build.json',
      'final USER is root: root',
      'CMD is not npm start\'s command: ["npm","start"]',
      'HEALTHCHECK does not ask /healthz',
      'NODE_ENV is not production',
      'LOG_FORMAT is not json',
      'HOST is not 0.0.0.0',
      'final stage copies the sources',
    ]);
  });

  it('refuses a shell-form CMD, whose shell would not pass SIGTERM on to the App', () => {
    expect(() =>
      parseDockerfile('FROM node:24\nHEALTHCHECK CMD ["true"]\nCMD npm start\n'),
    ).toThrow('CMD is not in exec form (a JSON array of strings): npm start');
  });
});
