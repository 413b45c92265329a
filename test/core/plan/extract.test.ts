import { describe, expect, it } from '@jest/globals';
import { extractPlanBlocks } from '../../../src/core/plan/index.js';

describe('extractPlanBlocks', () => {
  it('finds a backtick block with its content and starting line', () => {
    const md = ['# Epic', '', 'prose', '```epicflow', 'stories: []', '```', 'after'].join('\n');
    expect(extractPlanBlocks(md)).toEqual([{ content: 'stories: []', line: 5 }]);
  });

  it('accepts tildes, longer fences, indentation up to 3 spaces and CRLF', () => {
    const md = 'intro\r\n   ~~~~epicflow\r\n   a: 1\r\n    b: 2\r\n   ~~~~~\r\n';
    expect(extractPlanBlocks(md)).toEqual([{ content: 'a: 1\n b: 2', line: 3 }]);
  });

  it('takes the first word of the info string, exactly', () => {
    const md = [
      '```epicflow yaml',
      'a: 1',
      '```',
      '```Epicflow',
      'b: 1',
      '```',
      '```epicflow-x',
      'c: 1',
      '```',
      '```yaml',
      'd: 1',
      '```',
    ].join('\n');
    expect(extractPlanBlocks(md)).toEqual([{ content: 'a: 1', line: 2 }]);
  });

  it('needs the same fence character, at least as long, to close', () => {
    const md = ['````epicflow', '```', '~~~~', 'x: 1', '````'].join('\n');
    expect(extractPlanBlocks(md)).toEqual([{ content: '```\n~~~~\nx: 1', line: 2 }]);
  });

  it('ignores an epicflow fence nested inside another fence', () => {
    const md = ['````markdown', '```epicflow', 'a: 1', '```', '````', 'text'].join('\n');
    expect(extractPlanBlocks(md)).toEqual([]);
  });

  it('ignores a fence indented 4 spaces (an indented code block)', () => {
    expect(extractPlanBlocks('    ```epicflow\n    a: 1\n    ```\n')).toEqual([]);
  });

  it('ignores an epicflow block inside an HTML comment', () => {
    const md = ['<!-- example:', '```epicflow', 'a: 1', '```', '-->', '<!-- one line -->'].join(
      '\n',
    );
    expect(extractPlanBlocks(md)).toEqual([]);
  });

  it('runs an unclosed block to the end of the document', () => {
    expect(extractPlanBlocks('```epicflow\na: 1\nb: 2')).toEqual([
      { content: 'a: 1\nb: 2', line: 2 },
    ]);
  });

  it('does not take a backtick fence whose info string holds a backtick', () => {
    expect(extractPlanBlocks('```epicflow `x`\na: 1\n```\n')).toEqual([]);
  });

  it('returns every block, in order', () => {
    const md = '```epicflow\na: 1\n```\ntext\n~~~epicflow\nb: 2\n~~~\n';
    expect(extractPlanBlocks(md)).toEqual([
      { content: 'a: 1', line: 2 },
      { content: 'b: 2', line: 6 },
    ]);
  });
});
