/**
 * Dependencies the tests load as one module each. jest gives every test file a module
 * registry of its own, so each file loads its dependencies again, module by module: zod is 95
 * modules, graphql 131, yaml 73, and each costs jest a resolution, a read and a compile. Each
 * package below is bundled once (esbuild, its own files only: the other packages it imports
 * stay imports, resolved as before) into `node_modules/.cache/epicflow-prebundled/<key>/`,
 * and jest resolves the package's name to that file (test/support/resolver.js). The code is the
 * package's own; only where it lives changes. A file loads zod, yaml and graphql in about a
 * third of the CPU (docs/testing.md, "Dependencies as one module").
 *
 * The key holds the installed versions (package-lock.json), esbuild's version and this
 * file's source, so any change makes the bundles again. A package with more than one copy
 * installed (another version nested under a dependency) is not mapped: the map would give
 * that dependency ours.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The packages bundled: the largest module graphs the test files load, imported by name only. */
export const PREBUNDLED = ['zod', 'yaml', 'graphql', 'probot', 'commander', 'bottleneck'];

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * The bundle of each package of `root`'s install, by the package's name (made if missing).
 *
 * @param {string} root the project's folder (holding package-lock.json and node_modules)
 * @param {readonly string[]} packages
 * @returns {Promise<Record<string, string>>}
 */
export async function prebundled(root, packages = PREBUNDLED) {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const installed = Object.keys(lock.packages ?? {});
  const single = packages.filter(
    (name) => installed.filter((key) => key.endsWith(`node_modules/${name}`)).length === 1,
  );
  const require = createRequire(join(root, 'package.json'));
  const esbuild = require('esbuild');
  const key = createHash('sha256')
    .update(readFileSync(fileURLToPath(import.meta.url)))
    .update(esbuild.version)
    .update(
      JSON.stringify(single.map((name) => [name, lock.packages[`node_modules/${name}`]?.version])),
    )
    .digest('hex')
    .slice(0, 16);
  const cache = join(root, 'node_modules', '.cache', 'epicflow-prebundled');
  const dir = join(cache, key);
  const file = (name) => join(dir, `${name.replace(/\//g, '__')}.mjs`);
  if (!existsSync(join(dir, '.complete'))) {
    const scratch = `${dir}.${process.pid}`;
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(scratch, { recursive: true });
    for (const name of single) {
      // As jest imports it: by name, from an ES module (the `import` condition).
      const ns = await import(name);
      const names = Object.keys(ns).filter((n) => n !== 'default' && IDENTIFIER.test(n));
      const from = JSON.stringify(name);
      const contents = [
        `export { ${names.join(', ')} } from ${from};`,
        ...('default' in ns ? [`export { default } from ${from};`] : []),
      ].join('\n');
      await esbuild.build({
        stdin: { contents, resolveDir: root, sourcefile: `${name}-prebundled.mjs` },
        bundle: true,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        outfile: join(scratch, file(name).slice(dir.length + 1)),
        logLevel: 'warning',
        plugins: [ownFilesOnly(name)],
        // The files Node (and jest) load: no `module` condition or field of bundlers.
        conditions: [],
        mainFields: ['main'],
        // A CommonJS package's `require` of Node's own modules, from an ES module.
        banner: {
          js: "import { createRequire as __prebundledRequire } from 'node:module'; const require = __prebundledRequire(import.meta.url);",
        },
      });
    }
    writeFileSync(join(scratch, '.complete'), '');
    // Only ever renamed into place whole: a folder there is complete, and is kept (jest may
    // be reading it: knip loads this configuration beside jest and may have made it first).
    try {
      renameSync(scratch, dir);
    } catch (e) {
      rmSync(scratch, { recursive: true, force: true });
      if (!existsSync(join(dir, '.complete'))) throw e;
    }
  }
  return Object.fromEntries(single.map((name) => [name, file(name)]));
}

/**
 * esbuild bundles `name`'s own files (and its own name, where it imports itself); every
 * other package it imports, and any subpath of its own by name, stays an import.
 *
 * @param {string} name
 */
function ownFilesOnly(name) {
  return {
    name: 'own-files-only',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path === name) return undefined;
        return { path: args.path, external: true };
      });
    },
  };
}
