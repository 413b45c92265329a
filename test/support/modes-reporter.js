/**
 * A jest reporter: at the end of the run, once, the test files the sequencer left out because
 * this machine lacks a mode they need (`@needs`, test/support/modes.js), each missing mode
 * with why and the command that installs what is missing. With `CI=true` that is a failure:
 * CI must run every test, so the run exits non-zero with the same list.
 */
import { detectModes, inCI, notRun, notRunReport } from './modes.js';

export default class ModesReporter {
  /** @type {Error | undefined} */
  error = undefined;

  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete() {
    if (notRun.length === 0) return;
    const report = notRunReport(notRun, detectModes(), { rootDir: this.rootDir });
    if (inCI()) {
      const text = `${report}\nCI=true: in CI every test must run, so a missing mode fails the run.`;
      this.error = new Error(text);
      process.stderr.write(`\n${text}\n`);
    } else process.stderr.write(`\n${report}\n`);
  }

  getLastError() {
    return this.error;
  }
}
