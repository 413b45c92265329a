/**
 * The hand-over of a planning or retro attempt (core/publish/handover.ts) between its two
 * jobs: the work job writes it into the folder its workflow uploads; the publish job reads
 * it from the downloaded artifact, refusing one that is missing, too large, not of this
 * attempt, or that holds a credential in any text it would write to GitHub.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  formatHandover,
  handoverTexts,
  parseHandover,
  type Handover,
} from '../../core/publish/handover.js';
import { RESULT_FILES, ResultRefusal } from '../../core/publish/result.js';
import { describeSecrets, scanTextsForSecrets } from '../../core/publish/secrets.js';
import { readRecord } from './publish-result.js';

/** Writes the hand-over into `dir` (made when missing); returns the file written. */
export async function writeHandover(dir: string, handover: Handover): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, RESULT_FILES.record);
  await writeFile(file, formatHandover(handover));
  return file;
}

/** What the publish job expects to find, and what it holds. */
interface HandoverExpected<J extends Handover['job']> {
  readonly job: J;
  readonly epic: string;
  readonly attempt: number;
  /** How the work job ended (`needs.work.result`), said when it left nothing. */
  readonly workOutcome?: string | undefined;
  /** Values of the secrets the publish job holds: none may reach GitHub in the hand-over. */
  readonly secrets: readonly string[];
}

/** Reads and checks the hand-over in the downloaded artifact `dir`. */
export async function readHandover<J extends Handover['job']>(
  dir: string,
  expected: HandoverExpected<J>,
): Promise<Extract<Handover, { job: J }>> {
  const text = await readRecord(
    dir,
    (path) =>
      `the work job handed over no result${expected.workOutcome === undefined ? '' : ` (it ended: ${expected.workOutcome})`}: ${path} is missing`,
  );
  const handover = parseHandover(text, RESULT_FILES.record, expected);
  const found = scanTextsForSecrets(handoverTexts(handover), expected.secrets);
  if (found.length > 0) {
    throw new ResultRefusal(
      'secret',
      `the work job's ${{ plan: 'planning', retro: 'retro', land: 'landing' }[expected.job]} result holds ${found.length === 1 ? 'a credential' : `${found.length} credentials`}: nothing of it was written`,
      describeSecrets(found),
    );
  }
  return handover;
}
