import { describe, expect, it } from '@jest/globals';
import {
  describeSecrets,
  redact,
  scanForSecrets,
  type ScannedCommit,
} from '../../../src/core/publish/secrets.js';

const SHA = '0123456789abcdef0123456789abcdef01234567';

function commit(patch: string, message = 'story work\n'): ScannedCommit {
  return { sha: SHA, message, patch };
}

/** A patch adding `lines` to `file`. */
function adds(file: string, ...lines: string[]): string {
  return [
    `diff --git a/${file} b/${file}`,
    'new file mode 100644',
    '--- /dev/null',
    `+++ b/${file}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((l) => `+${l}`),
    '',
  ].join('\n');
}

function scan(patch: string, secrets: readonly string[] = [], message?: string): string[] {
  return describeSecrets(scanForSecrets({ commits: [commit(patch, message)], secrets }));
}

describe('the secret scan of a story commit', () => {
  it.each([
    ['a classic GitHub token', `ghp_${'a1B2'.repeat(9)}`, 'GitHub token (ghp_********)'],
    ['an OAuth token', `gho_${'Zz09'.repeat(9)}`, 'GitHub token (gho_********)'],
    ['an installation token', `ghs_${'Qq12'.repeat(9)}`, 'GitHub token (ghs_********)'],
    [
      'a fine-grained token',
      `github_pat_11ABCDEFG0${'x'.repeat(60)}`,
      'GitHub token (github_pat_********)',
    ],
    ['an AWS access key', 'AKIAIOSFODNN7EXAMPLE', 'AWS access key (AKIA********)'],
    ['a model key', `sk-ant-api03-${'k'.repeat(40)}`, 'model API key (sk-********)'],
    ['a project model key', `sk-proj-${'P'.repeat(40)}`, 'model API key (sk-********)'],
    [
      'a private key block',
      '-----BEGIN OPENSSH PRIVATE KEY-----',
      'private key (-----BEGIN OPENSSH PRIVATE KEY-----)',
    ],
    [
      'an RSA private key block',
      '-----BEGIN RSA PRIVATE KEY-----',
      'private key (-----BEGIN RSA PRIVATE KEY-----)',
    ],
  ])('finds %s, redacted', (_what, value, shown) => {
    const found = scan(adds('src/config.ts', `const key = "${value}";`));
    expect(found).toEqual([`commit ${SHA.slice(0, 12)}, src/config.ts: ${shown}`]);
    if (!value.startsWith('-----')) expect(found.join('\n')).not.toContain(value.slice(12));
  });

  it('finds the value of a secret the job holds, showing none of it', () => {
    const secret = 'my-very-private-value';
    const found = scan(adds('notes.md', `leaked: ${secret}!`), [secret]);
    expect(found).toEqual([
      `commit ${SHA.slice(0, 12)}, notes.md: a secret of the publish job (********)`,
    ]);
  });

  it('reads commit messages too', () => {
    const token = `ghp_${'m'.repeat(36)}`;
    expect(scan(adds('a.txt', 'fine'), [], `story work\n\ntoken ${token}\n`)).toEqual([
      `commit ${SHA.slice(0, 12)}, its message: GitHub token (ghp_********)`,
    ]);
  });

  it('reads the names of the files a commit adds, and redacts them where it names them', () => {
    const token = `ghp_${'n'.repeat(36)}`;
    expect(scan(adds(`docs/${token}.md`, 'fine'))).toEqual([
      `commit ${SHA.slice(0, 12)}, docs/ghp_********.md: GitHub token (ghp_********)`,
    ]);
  });

  it('reads only what the commit adds: removed and context lines were there before', () => {
    const token = `ghp_${'r'.repeat(36)}`;
    const patch = [
      'diff --git a/a.txt b/a.txt',
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -1,2 +1,2 @@',
      ` context ${token}`,
      `-removed ${token}`,
      '+replaced',
      '',
    ].join('\n');
    expect(scan(patch)).toEqual([]);
  });

  it('leaves ordinary text alone: short values, look-alikes, prose', () => {
    const patch = adds(
      'src/a.ts',
      'const sk = "sk-short";',
      'const ghp = "ghp_tooShort";',
      'const id = "AKIA-not-a-key";',
      '// see the BEGIN PUBLIC KEY block',
      'const name = "secret";',
    );
    // A secret value of fewer than eight characters would match ordinary text.
    expect(scan(patch, ['secret', ''])).toEqual([]);
  });

  it('reports a secret inside a longer one as the longer one, once per place', () => {
    const found = scanForSecrets({
      commits: [commit(adds('a.txt', 'abcdefgh-12345678 abcdefgh-12345678'))],
      secrets: ['abcdefgh', 'abcdefgh-12345678'],
    });
    expect(found).toEqual([
      {
        kind: 'a secret of the publish job',
        where: `commit ${SHA.slice(0, 12)}, a.txt`,
        redacted: '********',
      },
    ]);
  });

  it('redacts to a kept prefix', () => {
    expect(redact('ghp_abcdefgh', 4)).toBe('ghp_********');
    expect(redact('whole')).toBe('********');
  });
});
