import { describe, expect, it } from '@jest/globals';
import {
  addStartingBlobs,
  buildCoderPrompt,
  describeStartingCode,
  generatedReason,
  looksLikeSecret,
  selectStartingCode,
  startingBlobsToRead,
  startingCodeSection,
  type StartingCode,
  type TreeFile,
} from '../../../src/core/prompt/index.js';
import { plan, story } from './fixtures.js';

const COMMIT = 'c0ffee0123456789abcdef0123456789abcdef01';
const LIMITS = { budget: 40_000, perFile: 8_000 };

/** A tree of text files (and a few special entries), with an object id per path. */
function tree(files: Record<string, string | Uint8Array>, special: TreeFile[] = []): TreeFile[] {
  return [
    ...Object.entries(files).map(([path, content]) => ({
      path,
      mode: '100644',
      object: `obj:${path}`,
      size: typeof content === 'string' ? Buffer.byteLength(content) : content.length,
    })),
    ...special,
  ];
}

/** Reads the way the engine does: the batches the core asks for, until it asks for none. */
function fill(
  code: StartingCode,
  files: Record<string, string | Uint8Array>,
): { code: StartingCode; read: string[] } {
  const read: string[] = [];
  let next = code;
  for (let batch = startingBlobsToRead(next); batch.length > 0; batch = startingBlobsToRead(next)) {
    const blobs = new Map<string, Uint8Array | null>();
    for (const f of batch) {
      const path = f.object.slice('obj:'.length);
      read.push(path);
      const content = files[path];
      blobs.set(
        f.object,
        content === undefined ? null : typeof content === 'string' ? Buffer.from(content) : content,
      );
    }
    next = addStartingBlobs(next, blobs);
  }
  return { code: next, read };
}

const cart = story('cart', { owns: ['src/cart'], provides: ['Cart'] });
const pay = story('pay', {
  owns: ['src/pay'],
  reads: ['src/server.ts', 'docs/api.md'],
  dependsOn: ['cart'],
});
const search = story('search', { owns: ['src/search'] });
const shop = plan([cart, pay, search]);

function sectionOf(
  files: Record<string, string | Uint8Array>,
  options: { special?: TreeFile[]; limits?: typeof LIMITS; of?: typeof pay } = {},
): { text: string; code: StartingCode; read: string[] } {
  const selected = selectStartingCode(
    shop,
    options.of ?? pay,
    COMMIT,
    tree(files, options.special),
    options.limits ?? LIMITS,
  );
  const { code, read } = fill(selected, files);
  return { text: startingCodeSection(code).join('\n\n'), code, read };
}

describe('the code you start from', () => {
  it("shows the story's reads, then its dependencies' files, then its own, each once", () => {
    const { text } = sectionOf({
      'src/pay/index.ts': 'export const pay = 1;\n',
      'src/cart/index.ts': 'export class Cart {}\n',
      'docs/api.md': '# API\n',
      'src/server.ts': 'listen(8080);\n',
      'src/search/index.ts': 'export const search = 1;\n',
      'README.md': '# shop\n',
    });
    expect(text.startsWith('## The code you start from\n')).toBe(true);
    expect(text).toContain(`at commit ${COMMIT.slice(0, 12)}`);
    const order = ['src/server.ts', 'docs/api.md', 'src/cart/index.ts', 'src/pay/index.ts'].map(
      (p) => text.indexOf(`#### \`${p}\``),
    );
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text.indexOf('### What you read')).toBeLessThan(order[0] as number);
    expect(text.indexOf("### Your dependencies' files")).toBeLessThan(order[2] as number);
    expect(text.indexOf('### Your own files')).toBeLessThan(order[3] as number);
    expect(text).toContain('#### `src/server.ts`\n```ts\nlisten(8080);\n```');
    // A parallel story's files and files nobody names are not the story's context.
    expect(text).not.toContain('src/search');
    expect(text).not.toContain('README.md');
  });

  it('never shows nor names secrets; skips links, submodules, generated, binary and non-UTF-8 files, saying why', () => {
    const { text, read } = sectionOf(
      {
        'src/pay/.env': 'STRIPE_KEY=sk_live_123\n',
        'src/pay/.env.production': 'STRIPE_KEY=sk_live_456\n',
        'src/pay/certs/server.pem': '-----BEGIN PRIVATE KEY-----\n',
        'src/pay/deploy/id_rsa': '-----BEGIN OPENSSH PRIVATE KEY-----\n',
        'src/pay/package-lock.json': '{}\n',
        'src/pay/dist/bundle.js': 'var a=1;\n',
        'src/pay/vendor.min.js': 'var b=2;\n',
        'src/pay/logo.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]),
        'src/pay/latin1.txt': new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]),
        'src/pay/index.ts': 'export const pay = 1;\n',
      },
      {
        special: [
          { path: 'src/pay/link.ts', mode: '120000', object: 'obj:link', size: 11 },
          { path: 'src/pay/lib', mode: '160000', object: 'c'.repeat(40), size: 0 },
        ],
      },
    );
    expect(text).toContain('#### `src/pay/index.ts`');
    expect(text).not.toMatch(/\.env|sk_live|server\.pem|PRIVATE KEY|id_rsa/);
    expect(text).toContain('### Skipped');
    expect(text).toContain('- `src/pay/package-lock.json` (generated: a lockfile)');
    expect(text).toContain('- `src/pay/dist/bundle.js` (generated: a build or install folder)');
    expect(text).toContain('- `src/pay/vendor.min.js` (generated: minified)');
    expect(text).toContain('- `src/pay/link.ts` (a symbolic link)');
    expect(text).toContain('- `src/pay/lib` (a submodule)');
    expect(text).toContain('- `src/pay/logo.png` (binary)');
    expect(text).toContain('- `src/pay/latin1.txt` (not valid UTF-8)');
    // Secrets, links, submodules and generated files are not even read.
    expect(read.sort()).toEqual(['src/pay/index.ts', 'src/pay/latin1.txt', 'src/pay/logo.png']);
  });

  it('cuts a file at perFile characters and says how much of it is shown', () => {
    const long = `${'a'.repeat(99)}\n`.repeat(100); // 10,000 characters
    const { text, code } = sectionOf({ 'src/server.ts': long });
    expect(text).toContain('#### `src/server.ts` (the first 8,000 of 10,000 characters)');
    expect(code.shown[0]?.text).toHaveLength(8000);
    expect(code.shown[0]?.cut).toBe(2000);
  });

  it('keeps the whole section within the budget, reads within half of it, and lists the rest as not shown', () => {
    const file = (c: string): string => `${c.repeat(79)}\n`.repeat(50); // 4,000 characters
    const files = {
      'src/server.ts': file('s'),
      'docs/api.md': file('d'),
      'src/cart/a.ts': file('a'),
      'src/cart/b.ts': file('b'),
      'src/pay/index.ts': file('p'),
    };
    const { text, code } = sectionOf(files, { limits: { budget: 10_000, perFile: 8_000 } });
    // Two reads do not fit in 5,000 characters: the second is not shown, and the
    // dependencies and the story's own files use what is left.
    expect(code.shown.map((f) => f.path)).toEqual(['src/server.ts', 'src/cart/a.ts']);
    expect(code.used).toBeLessThanOrEqual(10_000);
    expect(code.readsUsed).toBeLessThanOrEqual(5_000);
    expect(text).toContain(
      '### Not shown (over the budget)\n\nOpen these yourself when you need them:\n\n- `docs/api.md`\n- `src/cart/b.ts`\n- `src/pay/index.ts`',
    );
    expect(describeStartingCode(code)).toMatch(
      /^starting code: 2 files shown, [\d,]+ characters \(~[\d,]+ tokens\), 3 not shown \(over the budget\)$/,
    );
  });

  it('does not read files that can no longer fit (beyond the batch being read)', () => {
    const big = 'x'.repeat(30_000);
    const files: Record<string, string> = { 'src/server.ts': 'x'.repeat(3000) };
    for (let i = 0; i < 200; i++) files[`src/pay/f${String(i).padStart(3, '0')}.ts`] = big;
    const { code, read } = sectionOf(files, { limits: { budget: 20_000, perFile: 8_000 } });
    expect(code.shown.map((f) => f.path)).toEqual([
      'src/server.ts',
      'src/pay/f000.ts',
      'src/pay/f001.ts',
    ]);
    expect(read.length).toBeLessThanOrEqual(16);
    expect(startingCodeSection(code).join('\n')).toContain('- … and 158 more');
  });

  it('fences a file with more backticks than it holds in a row', () => {
    const { text } = sectionOf({ 'docs/api.md': 'Run:\n```sh\nnpm test\n```\n' });
    expect(text).toContain('#### `docs/api.md`\n````md\nRun:\n```sh\nnpm test\n```\n````');
  });

  it('budget 0: no section, nothing read', () => {
    const { text, read } = sectionOf(
      { 'src/server.ts': 'listen(8080);\n' },
      { limits: { budget: 0, perFile: 8_000 } },
    );
    expect(text).toBe('');
    expect(read).toEqual([]);
  });

  it('goes into the coder prompt before its rules', () => {
    const { code } = sectionOf({ 'src/server.ts': 'listen(8080);\n' });
    const prompt = buildCoderPrompt({
      epic: 'shop',
      plan: shop,
      story: pay,
      round: 1,
      gates: [],
      startingCode: code,
    });
    expect(prompt).toContain('## The code you start from');
    expect(prompt.indexOf('## The code you start from')).toBeLessThan(prompt.indexOf('## Rules'));
    expect(prompt.indexOf('## Perimeter')).toBeLessThan(
      prompt.indexOf('## The code you start from'),
    );
  });
});

describe('what is never shown', () => {
  it.each([
    '.env',
    'config/.env.local',
    'deploy/prod.env',
    'certs/tls.key',
    'certs/ca.pem',
    'keys/id_ed25519',
    'keys/id_rsa.pub',
    '.npmrc',
    'home/.aws/credentials',
    'infra/prod.tfvars',
    'config/secrets.yml',
  ])('%s looks like a secret', (path) => {
    expect(looksLikeSecret(path)).toBe(true);
  });

  it.each(['src/env.ts', 'src/keys.ts', 'docs/environment.md', 'src/secretary.ts'])(
    '%s does not',
    (path) => {
      expect(looksLikeSecret(path)).toBe(false);
    },
  );

  it.each([
    ['yarn.lock', 'generated: a lockfile'],
    ['go.sum', 'generated: a lockfile'],
    ['web/node_modules/x/index.js', 'generated: a build or install folder'],
    ['app.min.css', 'generated: minified'],
    ['lib/app.js.map', 'generated: a source map'],
    ['api/v1/service.pb.go', 'generated: protobuf code'],
  ])('%s is generated', (path, why) => {
    expect(generatedReason(path)).toBe(why);
  });

  it.each(['src/build.ts', 'src/distance.ts', 'README.md'])('%s is not', (path) => {
    expect(generatedReason(path)).toBeUndefined();
  });
});
