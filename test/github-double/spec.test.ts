import { describe, expect, it } from '@jest/globals';
import { buildASTSchema, execute, parse, validate } from 'graphql';
import { githubGraphqlSchema, reachedTypes, schemaFor } from './graphql-schema.js';
import { restSpec, webhookSpec } from './spec.js';

describe("reading GitHub's descriptions by part", () => {
  it('matches every REST path as trying each template in order does', () => {
    const table = restSpec().table;
    const samples = new Set<string>();
    for (const t of table.templates()) {
      samples.add(t.replace(/\{[^}]+\}/g, 'x'));
      samples.add(t.replace(/\{[^}]+\}/g, 'comments'));
      samples.add(t.replace(/\{[^}]+\}/g, 'a/b'));
      samples.add(`${t.replace(/\{[^}]+\}/g, 'x')}/extra`);
    }
    expect(samples.size).toBeGreaterThan(2000);
    for (const path of samples) {
      const fast = [...table.matches(path)].map((m) => [m.template.template, m.params]);
      const slow = [...table.linearMatches(path)].map((m) => [m.template.template, m.params]);
      expect([path, fast]).toEqual([path, slow]);
    }
  });

  it('still throws for a webhook GitHub does not describe', () => {
    expect(() => webhookSpec().validator('no_such_event', 'opened')).toThrow(
      `no webhook "no-such-event-opened" in GitHub's webhook description`,
    );
  });

  it('refuses an invalid document every time, however close to a valid one already seen', () => {
    const good = 'query { viewer { login } }';
    const bad = 'query { viewer { login colour } }';
    for (let i = 0; i < 2; i++) {
      expect(schemaFor(good, parse(good)).errors).toEqual([]);
      expect(schemaFor(bad, parse(bad)).errors.map((e) => e.message)).toEqual([
        'Cannot query field "colour" on type "User".',
      ]);
    }
  });

  it('answers and rejects as the whole schema does, on the part of it a document reaches', async () => {
    const query = `query Q($login: String!, $n: Int = 2) {
      user(login: $login) { login ... on Node { id }
        repositories(first: $n) { nodes { name } totalCount } }
      node(id: "x") { __typename ... on Issue { title } ... on Actor { login } } }`;
    const document = parse(query);
    const whole = githubGraphqlSchema();
    expect(validate(whole, document)).toEqual([]);
    const reached = reachedTypes(whole, document);
    expect(reached).not.toBeNull();
    const part = buildASTSchema(reached ?? parse('scalar X'), { assumeValid: true });
    const rootValue = {
      user: () => ({
        __typename: 'User',
        login: 'alice',
        id: 'U1',
        repositories: () => ({ nodes: [{ name: 'shop' }, { name: null }], totalCount: 2 }),
      }),
      node: () => ({ __typename: 'Organization', login: 'acme' }),
    };
    for (const variableValues of [{ login: 'alice' }, { login: 3 }, {}]) {
      const run = async (schema: typeof whole) =>
        JSON.stringify(await execute({ schema, document, rootValue, variableValues }));
      expect(await run(part)).toBe(await run(whole));
    }
    expect(reachedTypes(whole, parse('{ __schema { types { name } } }'))).toBeNull();
  });
});
