import { describe, expect, it } from '@jest/globals';
import type { Command } from '../../../src/core/epic/index.js';
import { helpText, parseCommand, validateCommand } from '../../../src/core/epic/index.js';
import { diamondPlan } from './world.js';

describe('parseCommand', () => {
  const table: [string, string, Command | null][] = [
    ['plain', '/resume', { kind: 'resume' }],
    ['every command', '/cancel', { kind: 'cancel' }],
    ['status', '/status', { kind: 'status' }],
    ['help', '/help', { kind: 'help' }],
    ['approve', '/approve looks right to me', { kind: 'approve' }],
    ['retry with a story', '/retry api', { kind: 'retry', story: 'api' }],
    ['skip with a story', '/skip docs', { kind: 'skip', story: 'docs' }],
    ['retry without a story', '/retry', { kind: 'retry' }],
    ['skip with only spaces', '/skip   ', { kind: 'skip' }],
    ['case-insensitive word and id', '/RETRY Api', { kind: 'retry', story: 'api' }],
    ['story id written as code', '/retry `api`', { kind: 'retry', story: 'api' }],
    ['trailing text after the command', '/resume please, the limit reset', { kind: 'resume' }],
    [
      'the follow-up round of deferred findings',
      '/resume Deferred',
      { kind: 'resume', deferred: true },
    ],
    ['trailing text after the story', '/retry api it was flaky', { kind: 'retry', story: 'api' }],
    ['further lines', '/cancel\n\nWe are changing the plan.', { kind: 'cancel' }],
    ['leading blank lines', '\n\n   \n/resume', { kind: 'resume' }],
    ['up to three leading spaces', '   /resume', { kind: 'resume' }],
    ['CRLF line breaks', '\r\n/status\r\nthanks', { kind: 'status' }],
    ['tab before the argument', '/retry\tapi', { kind: 'retry', story: 'api' }],
    ['unknown word', '/deploy now', { kind: 'unknown', word: 'deploy' }],
    ['unknown word, lower-cased', '/Merge', { kind: 'unknown', word: 'merge' }],
    ['not the first line', 'Looks good.\n/resume', null],
    ['no slash', 'resume', null],
    ['inside a code fence', '```\n/resume\n```', null],
    ['inside a tilde fence', '~~~\n/cancel\n~~~', null],
    ['in a quote', '> /resume\n\nI did not say that', null],
    ['four spaces: a code block', '    /resume', null],
    ['tab indent: a code block', '\t/resume', null],
    ['inline code', '`/resume`', null],
    ['a path', '/usr/bin/env is missing', null],
    ['slash and space', '/ resume', null],
    ['a number', '/123', null],
    ['empty', '', null],
    ['blank', '  \n \n', null],
    ['hidden in an HTML comment', '<!-- /resume -->', null],
    ['hidden in a multi-line HTML comment', '<!--\n/cancel\n-->\nhello', null],
    ['after an HTML comment line', '<!-- from the template -->\n/resume', { kind: 'resume' }],
    ['zero-width character before the slash', '\u200b/resume', { kind: 'resume' }],
  ];
  it.each(table)('%s', (_name, body, expected) => {
    expect(parseCommand(body)).toEqual(expected);
  });

  it('caps an unknown word', () => {
    expect(parseCommand(`/${'a'.repeat(100)}`)).toEqual({ kind: 'unknown', word: 'a'.repeat(40) });
  });
});

describe('validateCommand', () => {
  const plan = diamondPlan();

  it('accepts commands without a story and stories of the plan', () => {
    expect(validateCommand({ kind: 'resume' }, plan)).toEqual({ ok: true });
    expect(validateCommand({ kind: 'retry', story: 'b' }, plan)).toEqual({ ok: true });
    expect(validateCommand({ kind: 'skip', story: 'e' }, plan)).toEqual({ ok: true });
  });

  it('names a story missing from the plan and lists the stories', () => {
    expect(validateCommand({ kind: 'retry', story: 'zz' }, plan)).toEqual({
      ok: false,
      error: '`/retry zz`: the plan has no story `zz`. Stories: `a`, `b`, `c`, `d`, `e`.',
    });
  });

  it('asks for the story id when none was given', () => {
    expect(validateCommand({ kind: 'skip' }, plan)).toEqual({
      ok: false,
      error: '`/skip` needs a story id: `/skip <story>`.',
    });
  });

  it('answers an unknown command with the help text', () => {
    const check = validateCommand({ kind: 'unknown', word: 'deploy' }, plan);
    expect(check).toEqual({ ok: false, error: `Unknown command \`/deploy\`.\n\n${helpText()}` });
  });

  it('keeps an odd story argument inside its code span', () => {
    const check = validateCommand({ kind: 'retry', story: 'a`b' }, plan);
    expect(check.ok).toBe(false);
    expect(!check.ok && check.error).toMatch(/^`\/retry ab`: the plan has no story `ab`\./);
  });
});

describe('helpText', () => {
  it('lists every command with what it does', () => {
    const help = helpText();
    for (const usage of [
      '/resume [deferred]',
      '/approve',
      '/retry <story>',
      '/skip <story>',
      '/cancel',
      '/status',
      '/help',
    ]) {
      expect(help).toContain(`- \`${usage}\` — `);
    }
  });
});
