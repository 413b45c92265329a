// Bundles the Action (src/action/main.ts) into one ESM file for `runs.main`.
// The runner does not install dependencies, so everything is inlined; CJS
// dependencies that `require` Node built-ins get a real `require` from the
// banner. Usage: node scripts/build-action.mjs [outdir] [--module]   (default: dist)
//
// --module bundles src/action/run.ts instead, into <outdir>/run.js: the same
// code as index.js, exporting `run()` without calling it, for tools that
// import an action and call its `run()` themselves (@github/local-action).
// --cli bundles the command line (src/cli/main.ts) into <outdir>/cli.js, for tests
// that run it as another user, who may not read this checkout.
// --entry <file> bundles that file (a test's child process that runs epicflow's code) into
// <outdir>/<its name>.js, for tests that start it many times (test/support/bundled-entry.ts).
import { build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags, positionals } = parseArgs({
  options: {
    module: { type: 'boolean', default: false },
    cli: { type: 'boolean', default: false },
    entry: { type: 'string' },
  },
  allowPositionals: true,
});
const outdir = resolve(positionals[0] ?? join(root, 'dist'));
const [entry, outName] = flags.entry
  ? [resolve(flags.entry), `${basename(flags.entry).replace(/\.[cm]?[jt]s$/, '')}.js`]
  : flags.cli
    ? ['../cli/main.ts', 'cli.js']
    : flags.module
      ? ['run.ts', 'run.js']
      : ['main.ts', 'index.js'];
await mkdir(outdir, { recursive: true });

const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));

/**
 * Sources read package.json at run time relative to their own file
 * (`createRequire(import.meta.url)`); in the bundle that path points nowhere,
 * so the fields they read are inlined at build time.
 */
const inlinePackageJson = {
  name: 'inline-package-json',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const contents = text.replace(
        /require\((['"])(?:\.\.\/)+package\.json\1\)/g,
        JSON.stringify({ name: pkg.name, version: pkg.version }),
      );
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * @actions/http-client imports undici (about 770 KiB, a fifth of the bundle, parsed at every
 * job's start) for one thing: a proxy agent for @actions/core's OIDC token request, which
 * epicflow never makes. The bundle gets a stand-in that says so if it is ever reached.
 */
const withoutProxyAgent = {
  name: 'without-proxy-agent',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) =>
      /[\\/]@actions[\\/]http-client[\\/]/.test(args.importer)
        ? { path: 'undici', namespace: 'without-proxy-agent' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'without-proxy-agent' }, () => ({
      contents: [
        'export class ProxyAgent {',
        '  constructor() {',
        "    throw new Error('epicflow: this bundle has no proxy agent for @actions/http-client');",
        '  }',
        '}',
      ].join('\n'),
      loader: 'js',
    }));
  },
};

const result = await build({
  plugins: [inlinePackageJson, withoutProxyAgent],
  entryPoints: [resolve(root, 'src/action', entry)],
  outfile: join(outdir, outName),
  bundle: true,
  platform: 'node',
  format: 'esm',
  // Runs on the node24 runtime the action declares, and on Node 20 runners and dev machines.
  target: 'node20',
  sourcemap: false,
  minify: false,
  legalComments: 'eof',
  logLevel: 'warning',
  metafile: true,
  banner: {
    js: [
      "import { createRequire as __epicflowCreateRequire } from 'node:module';",
      'const require = __epicflowCreateRequire(import.meta.url);',
    ].join('\n'),
  },
});
// The bundle is ESM whatever the package.json next to it says.
await writeFile(join(outdir, 'package.json'), '{ "type": "module" }\n');
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`built ${join(outdir, outName)} (${Math.round(bytes / 1024)} KiB)`);
