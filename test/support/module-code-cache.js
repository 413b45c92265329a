/**
 * V8's code cache for the ES modules jest compiles in a worker (imported by
 * fresh-worker-environment.js, once per worker process).
 *
 * jest gives every test file a module registry of its own, so a worker compiles the same
 * modules again in every file it runs: `vm.SourceTextModule` parses each module's whole
 * source, about 70 ms of CPU per engine test file for epicflow's own modules alone
 * (docs/testing.md, "Where the CPU goes"). Here the first compile of a module in a worker
 * keeps V8's code cache of it (`createCachedData()`, before the module runs), and a later
 * file compiling the same source under the same name hands it back (`cachedData`), which
 * skips that parse. The key is the module's path and its source, so a changed or differently
 * transformed source is compiled afresh; V8 itself checks the cache (its version, its flags,
 * the source's length) and compiles normally when it does not fit. What a module does when it
 * runs is untouched: each file still gets new module instances in its own context.
 *
 * A module with a dynamic `import()` is always compiled afresh: on Node 20 a module compiled
 * from a code cache keeps the dynamic-import callback of the module the cache was made from
 * (the earlier file's, gone with its registry), and its `import()` then fails with "A dynamic
 * import callback was not specified".
 */
import { createHash } from 'node:crypto';
import vm from 'node:vm';

const Compiled = vm.SourceTextModule;
const MARK = Symbol.for('epicflow.moduleCodeCache');

if (Compiled !== undefined && Compiled[MARK] !== true) {
  /** @type {Map<string, Buffer>} path and source hash → V8's code cache */
  const caches = new Map();
  const keyOf = (identifier, source) =>
    `${identifier}\0${createHash('sha1').update(source).digest('base64')}`;
  const DYNAMIC_IMPORT = /\bimport\s*\(/;

  class CachedSourceTextModule extends Compiled {
    static [MARK] = true;

    constructor(source, options = {}) {
      const key =
        typeof options.identifier === 'string' &&
        options.cachedData === undefined &&
        !DYNAMIC_IMPORT.test(source)
          ? keyOf(options.identifier, source)
          : undefined;
      const cachedData = key === undefined ? undefined : caches.get(key);
      super(source, cachedData === undefined ? options : { ...options, cachedData });
      if (key !== undefined && cachedData === undefined) caches.set(key, this.createCachedData());
    }
  }

  vm.SourceTextModule = CachedSourceTextModule;
}
