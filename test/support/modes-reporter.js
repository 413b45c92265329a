/**
 * A jest reporter: at the end of the run, once, what did not run because this machine lacks
 * a mode it needs (test/support/modes.js): the files the sequencer left out (`@needs`) and
 * the parts of files that stood in for theirs with a `todo` (`describeNeeding`), each
 * missing mode with why, and the command that installs what is missing. With `CI=true` that
 * is a failure: CI must run every test, so the run exits non-zero with the same list.
 */
import { detectModes, inCI, modesOfNotRunTitle, notRun, notRunReport } from './modes.js';

export default class ModesReporter {
  /** @type {Error | undefined} */
  error = undefined;

  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onTestFileResult(_test, result) {
    for (const t of result.testResults) {
      const modes = t.status === 'todo' ? modesOfNotRunTitle(t.title) : undefined;
      if (modes !== undefined)
        notRun.push({ file: result.testFilePath, modes, part: t.ancestorTitles.join(' › ') });
    }
  }

  onRunComplete() {
    if (notRun.length === 0) return;
    const report = notRunReport(notRun, detectModes(), { rootDir: this.rootDir });
    if (inCI()) this.error = new Error(report);
    process.stderr.write(`\n${report}\n`);
  }

  getLastError() {
    return this.error;
  }
}
