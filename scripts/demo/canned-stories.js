/**
 * Canned code for the demo epic: what the scripted demo coder writes for each
 * story. Real agents write this themselves; the demo only needs something real
 * to gate, merge and report.
 */

const slugify = `export function slugify(text) {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
`;

const slugifyTest = `import test from 'node:test';
import assert from 'node:assert/strict';
import { slugify } from '../src/slugify.js';

test('slugify joins words with dashes', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
});
`;

// Round 1 of word-count has a bug (it counts empty strings between spaces);
// the coder fixes it when the gate failure comes back.
const wordCountBuggy = `export function wordCount(text) {
  return text.split(' ').length;
}
`;

const wordCount = `export function wordCount(text) {
  return text.split(/\\s+/).filter((w) => w !== '').length;
}
`;

const wordCountTest = `import test from 'node:test';
import assert from 'node:assert/strict';
import { wordCount } from '../src/word-count.js';

test('wordCount ignores extra spaces', () => {
  assert.equal(wordCount('  two   words '), 2);
});
`;

const capitalize = `export function capitalize(word) {
  return word.length === 0 ? word : word[0].toUpperCase() + word.slice(1);
}
`;

const capitalizeTest = `import test from 'node:test';
import assert from 'node:assert/strict';
import { capitalize } from '../src/capitalize.js';

test('capitalize upper-cases the first letter', () => {
  assert.equal(capitalize('epic'), 'Epic');
});
`;

const titleCase = `import { capitalize } from './capitalize.js';

export function titleCase(text) {
  return text.split(' ').map(capitalize).join(' ');
}
`;

const titleCaseTest = `import test from 'node:test';
import assert from 'node:assert/strict';
import { titleCase } from '../src/title-case.js';

test('titleCase capitalizes every word', () => {
  assert.equal(titleCase('deliver the epic'), 'Deliver The Epic');
});
`;

const summary = `import { wordCount } from './word-count.js';

export function summary(text) {
  const words = wordCount(text);
  return \`\${words} word\${words === 1 ? '' : 's'}\`;
}
`;

const summaryTest = `import test from 'node:test';
import assert from 'node:assert/strict';
import { summary } from '../src/summary.js';

test('summary counts words', () => {
  assert.equal(summary('one two  three'), '3 words');
});
`;

const index = `export { slugify } from './slugify.js';
export { wordCount } from './word-count.js';
export { capitalize } from './capitalize.js';
export { titleCase } from './title-case.js';
export { summary } from './summary.js';
`;

const indexTest = `import test from 'node:test';
import assert from 'node:assert/strict';
import * as text from '../src/index.js';

test('the index exports every helper', () => {
  assert.deepEqual(Object.keys(text).sort(), ['capitalize', 'slugify', 'summary', 'titleCase', 'wordCount']);
});
`;

/**
 * story id → (round, prompt) → files to write. A file path mapped to null is
 * left alone.
 */
export const CANNED = {
  slugify: () => ({ 'src/slugify.js': slugify, 'test/slugify.test.js': slugifyTest }),
  'word-count': (round, prompt) => ({
    'src/word-count.js': prompt.includes('## The gates failed') ? wordCount : wordCountBuggy,
    'test/word-count.test.js': wordCountTest,
  }),
  capitalize: () => ({
    'src/capitalize.js': capitalize,
    'test/capitalize.test.js': capitalizeTest,
  }),
  // This coder also "tidies" the README, which title-case does not own: epicflow
  // shows it the stray once, then puts the README back.
  'title-case': () => ({
    'src/title-case.js': titleCase,
    'test/title-case.test.js': titleCaseTest,
    'README.md': '# text-kit\n\nNow with Title Case!\n',
  }),
  summary: () => ({ 'src/summary.js': summary, 'test/summary.test.js': summaryTest }),
  index: () => ({ 'src/index.js': index, 'test/index.test.js': indexTest }),
};
