/** Which toolchains a repository's commands call, and whether a Node meets what it asks for. */
import { describe, expect, it } from '@jest/globals';
import {
  neededPrograms,
  nodeRequirements,
  nodeSatisfies,
} from '../../../src/core/doctor/toolchains.js';

describe('nodeSatisfies', () => {
  it.each([
    ['v22.3.0', '>=20', true],
    ['v18.19.0', '>=20', false],
    ['v20.11.1', '20', true],
    ['v22.0.0', '20', false],
    ['v20.11.1', '^20.10', true],
    ['v20.9.0', '^20.10', false],
    ['v18.20.0', '^18.17 || >=20', true],
    ['v19.0.0', '^18.17 || >=20', false],
    ['v20.5.0', '~20.5', true],
    ['v20.6.0', '~20.5', false],
    ['v20.5.0', '>=18 <21', true],
    ['v21.0.0', '>=18 <21', false],
    ['v22.1.0', '22.x', true],
    ['v22.1.0', 'lts/*', undefined],
  ])('%s against %s: %s', (version, range, expected) => {
    expect(nodeSatisfies(version, range)).toBe(expected);
  });
});

describe('nodeRequirements', () => {
  it('.nvmrc (a pinned release asks for its major), .node-version and engines.node', () => {
    const texts = new Map([
      ['.nvmrc', '# team default\nv20.11.0\n'],
      ['.node-version', '22\n'],
      ['package.json', '{ "engines": { "node": ">=20" } }'],
    ]);
    expect(nodeRequirements(texts)).toEqual([
      { range: '20', from: '.nvmrc' },
      { range: '22', from: '.node-version' },
      { range: '>=20', from: 'package.json engines.node' },
    ]);
  });
});

describe('neededPrograms', () => {
  it('the first program of each simple command, known toolchains only, each once', () => {
    expect(
      neededPrograms([
        'uv sync --locked && CGO_ENABLED=0 go mod download',
        'uv run pytest',
        'go test ./... | tee out.txt',
        './scripts/check.sh; make lint',
        'cd web && pnpm test',
      ]),
    ).toEqual([
      { program: 'uv', command: 'uv sync --locked && CGO_ENABLED=0 go mod download' },
      { program: 'go', command: 'uv sync --locked && CGO_ENABLED=0 go mod download' },
      { program: 'make', command: './scripts/check.sh; make lint' },
      { program: 'pnpm', command: 'cd web && pnpm test' },
    ]);
  });
});
