import { describe, expect, it } from '@jest/globals';
import { commandsOf } from '../../../src/core/harness/tool-calls.js';
import { checkClaims, evidenceNotes, parseClaims } from '../../../src/core/story/claims.js';
import { stream } from '../harness/fixtures.js';

const who = { round: 2, executor: 'codex' };

/** The shell commands of a recorded stream, as the executor collects them line by line. */
function ran(cli: 'codex' | 'claude' | 'gemini' | 'opencode', name: string): string[] {
  return stream(cli, name)
    .split('\n')
    .flatMap((line) => commandsOf(cli, line));
}

describe('parseClaims', () => {
  it('reads verified lines (bulleted, in backticks, any case) once each, and a low confidence', () => {
    expect(
      parseClaims(
        [
          'Done.',
          'verified: npm test',
          '- Verified: `npm run lint`',
          'verified:   npm   test ',
          'Confidence: low (the API was down)',
        ].join('\n'),
      ),
    ).toEqual({ verified: ['npm test', 'npm run lint'], lowConfidence: true });
    expect(parseClaims('All good, I verified it all.')).toEqual({
      verified: [],
      lowConfidence: false,
    });
  });
});

describe('checkClaims against what a real CLI printed', () => {
  it("a claim the stream shows was run (inside codex's shell wrapper) is fine", () => {
    const commands = ran('codex', 'ok.jsonl');
    expect(commands).toEqual(["/bin/bash -lc 'echo hello > hello.txt'"]);
    expect(checkClaims(parseClaims('verified: echo hello > hello.txt'), commands, who)).toEqual([]);
  });

  it('a claim no command of the stream matches is a fabricated status', () => {
    for (const cli of ['codex', 'claude', 'gemini', 'opencode'] as const) {
      const commands = ran(cli, 'ok.jsonl');
      expect(commands.length).toBeGreaterThan(0);
      expect(checkClaims(parseClaims('verified: npm test'), commands, who)).toEqual([
        'fabricated status: round 2 (codex) claims "verified: npm test", but never ran it',
      ]);
    }
  });

  it('an executor whose output shows no tool calls: not checked, never verified', () => {
    expect(checkClaims(parseClaims('verified: npm test\nconfidence: low'), undefined, who)).toEqual(
      [
        'not checked: round 2 (codex) claims "verified: npm test", and its output shows no tool calls to check them against',
        'confidence: low, says round 2 (codex)',
      ],
    );
  });

  it('a claim with control or bidirectional characters is quoted, never taken as text to act on', () => {
    const [note] = checkClaims(
      parseClaims('verified: rm -rf / \u202e\u0007 # ok'),
      ['npm test'],
      who,
    );
    expect(note).toBe(
      'fabricated status: round 2 (codex) claims "verified: rm -rf / \\u202e\\u0007 # ok", but never ran it',
    );
  });

  it("evidenceNotes picks these notes out of a story's notes", () => {
    expect(
      evidenceNotes([
        'restored outside its perimeter: a',
        'fabricated status: x',
        'not checked: y',
        'confidence: low, says z',
      ]),
    ).toEqual(['fabricated status: x', 'not checked: y', 'confidence: low, says z']);
  });
});
