/**
 * jest's resolver (`resolver` in jest.config.js): the packages test/support/prebundled.js
 * bundled into one module each resolve to their bundle, by name (the map jest.config.js
 * made, passed to the workers in `EPICFLOW_TEST_PREBUNDLED_MAP`); every other request as
 * jest resolves it. A resolver, not `moduleNameMapper`: tools that read jest's configuration
 * (knip) see the packages as installed.
 */

/** @type {Record<string, string>} */
const bundles = JSON.parse(process.env['EPICFLOW_TEST_PREBUNDLED_MAP'] ?? '{}');

/**
 * @param {string} request
 * @param {{ defaultResolver: (request: string, options: object) => string }} options
 * @returns {string}
 */
export default function resolve(request, options) {
  return bundles[request] ?? options.defaultResolver(request, options);
}
