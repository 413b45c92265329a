/**
 * A jest reporter: after the run, the slowest test files with their wall time
 * (how long each took from start to end in its worker), so a slow suite shows
 * where its minutes go. Used by `npm test` (jest.config.js `reporters`).
 */
export default class SlowestFiles {
  constructor(_globalConfig, options = {}) {
    this.count = options.count ?? 15;
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults
      .map((r) => ({
        file: r.testFilePath,
        ms: r.perfStats.end - r.perfStats.start,
      }))
      .sort((a, b) => b.ms - a.ms);
    if (files.length === 0) return;
    const root = process.cwd() + '/';
    const total = files.reduce((sum, f) => sum + f.ms, 0);
    const lines = files
      .slice(0, this.count)
      .map((f) => `${(f.ms / 1000).toFixed(1).padStart(7)} s  ${f.file.replace(root, '')}`);
    process.stderr.write(
      `\nSlowest ${Math.min(this.count, files.length)} of ${files.length} test files ` +
        `(${(total / 1000).toFixed(0)} s in all files together):\n${lines.join('\n')}\n`,
    );
    if (process.env.EPICFLOW_TEST_TIMES) {
      // For docs/testing.md: every file's time as JSON.
      const out = files.map((f) => ({ file: f.file.replace(root, ''), ms: Math.round(f.ms) }));
      import('node:fs').then(({ writeFileSync }) =>
        writeFileSync(process.env.EPICFLOW_TEST_TIMES, JSON.stringify(out, null, 2)),
      );
    }
  }
}
