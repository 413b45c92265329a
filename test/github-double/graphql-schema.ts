/**
 * GitHub's GraphQL schema (@octokit/graphql-schema) as the double runs documents against it.
 *
 * Building the whole schema (about 1,600 types) costs about 150 ms of CPU, and validating a
 * document against it more; a test file sends a handful of documents, the same ones in every
 * file. So the first time a document is seen (per schema, graphql version and reading rules)
 * it is validated against the whole schema, as before; a valid one is kept on disk with the
 * part of the schema it reaches (`reachedTypes`), and every later file builds only that part
 * and runs the document against it. An invalid document is never kept: it is validated again,
 * and refused, every time it is sent.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildASTSchema,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  Kind,
  OperationTypeNode,
  parse,
  typeFromAST,
  validate,
  visit,
  type DefinitionNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLError,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import {
  cachedJson,
  DESCRIPTIONS,
  readJson,
  require,
  saltedName,
  storeFile,
} from './spec-cache.js';

let whole: GraphQLSchema | undefined;
let sdlHash: string | undefined;

function sdlFile(): string {
  // The package's `exports` hide schema.graphql (and its index parses schema.json eagerly).
  const file = (require.resolve.paths('@octokit/graphql-schema') ?? [])
    .map((dir) => join(dir, '@octokit', 'graphql-schema', 'schema.graphql'))
    .find((f) => existsSync(f));
  if (!file) throw new Error('@octokit/graphql-schema is not installed');
  return file;
}

/** The SDL's own hash: what every kept document and the parsed SDL are keyed by. */
function schemaHash(): string {
  sdlHash ??= createHash('sha256').update(readFileSync(sdlFile())).digest('hex');
  return sdlHash;
}

/** The whole schema, built once per test file that needs it. */
export function githubGraphqlSchema(): GraphQLSchema {
  // GitHub's published schema, not ours to check: graphql-js's own check of it (run on
  // its first use) costs about 40 ms in every file; documents are still validated against it.
  whole ??= buildASTSchema(graphqlDocument(), { assumeValidSDL: true, assumeValid: true });
  return whole;
}

/**
 * The schema's SDL parsed (without source locations: no error points into the schema's
 * text), kept by the SDL's own hash (`cachedJson`): reading that back takes a third of the
 * time of parsing the SDL again. The published SDL repeats two EnterpriseOwnerInfo fields;
 * SDL validation is skipped so it loads.
 */
function graphqlDocument(): DocumentNode {
  return cachedJson(`graphql ${schemaHash()}`, () =>
    parse(readFileSync(sdlFile(), 'utf8'), { noLocation: true }),
  );
}

/** What is kept of a valid document: the part of the schema it reaches, or null for all of it. */
interface Kept {
  readonly valid: true;
  readonly reached: DocumentNode | null;
}

const prepared = new Map<string, GraphQLSchema>();

/**
 * The schema to validate, cost and execute `document` (whose text is `query`) against, and
 * its validation errors against GitHub's whole schema (none for a document found valid
 * before). An invalid document comes with the whole schema.
 */
export function schemaFor(
  query: string,
  document: DocumentNode,
): { schema: GraphQLSchema; errors: readonly GraphQLError[] } {
  const known = prepared.get(query);
  if (known) return { schema: known, errors: [] };
  const file = join(DESCRIPTIONS, 'graphql', `${saltedName(`${schemaHash()}\n${query}`)}.json`);
  let kept = readJson<Kept>(file);
  if (kept?.valid !== true) {
    const full = githubGraphqlSchema();
    const errors = validate(full, document);
    if (errors.length > 0) return { schema: full, errors };
    kept = { valid: true, reached: reachedTypes(full, document) };
    storeFile(file, JSON.stringify(kept));
  }
  const schema =
    kept.reached === null
      ? githubGraphqlSchema()
      : buildASTSchema(kept.reached, { assumeValidSDL: true, assumeValid: true });
  if (prepared.size < 1000) prepared.set(query, schema);
  return { schema, errors: [] };
}

/**
 * The part of `schema` that executing and costing the (valid) `document` reads, as SDL: the
 * root types of its operations; every field it selects, on each type it is selected on and on
 * each object type that can stand there at run time (with all the field's arguments); every
 * type a fragment names; every possible type of each abstract type reached (so an answer of
 * any type is told apart as the whole schema does); and every input type, enum and scalar
 * reached, whole. Null when the document asks for introspection (`__schema`, `__type`), whose
 * answers describe the whole schema.
 */
export function reachedTypes(schema: GraphQLSchema, document: DocumentNode): DocumentNode | null {
  let introspects = false;
  visit(document, {
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') introspects = true;
    },
  });
  if (introspects) return null;
  const fields = new Map<string, Set<string>>();
  const leaves = new Set<string>();
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }
  const keepInput = (type: GraphQLNamedType): void => {
    if (leaves.has(type.name)) return;
    leaves.add(type.name);
    if (isInputObjectType(type)) {
      for (const f of Object.values(type.getFields())) keepInput(getNamedType(f.type));
    }
  };
  const keepType = (type: GraphQLNamedType | undefined | null): void => {
    if (!type) return;
    if (!isCompositeType(type)) return keepInput(type);
    if (fields.has(type.name)) return;
    fields.set(type.name, new Set());
    if (isAbstractType(type)) for (const p of schema.getPossibleTypes(type)) keepType(p);
  };
  const keepField = (parent: GraphQLCompositeType, name: string): GraphQLNamedType | undefined => {
    if (!(isObjectType(parent) || isInterfaceType(parent))) return undefined;
    const def = parent.getFields()[name];
    if (!def) return undefined;
    keepType(parent);
    fields.get(parent.name)?.add(name);
    for (const arg of def.args) keepInput(getNamedType(arg.type));
    const named = getNamedType(def.type);
    keepType(named);
    return named;
  };
  const condition = (name: string | undefined, otherwise: GraphQLCompositeType) => {
    const type = name === undefined ? otherwise : schema.getType(name);
    keepType(type);
    return isCompositeType(type) ? type : undefined;
  };
  const seen = new WeakMap<SelectionSetNode, Set<string>>();
  const once = (set: SelectionSetNode, key: string): boolean => {
    const keys = seen.get(set) ?? new Set<string>();
    seen.set(set, keys);
    if (keys.has(key)) return false;
    keys.add(key);
    return true;
  };
  // As execution collects fields: on the object type an answer has at run time.
  const run = (set: SelectionSetNode, type: GraphQLObjectType): void => {
    if (!once(set, `run ${type.name}`)) return;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const named = keepField(type, sel.name.value);
        if (!sel.selectionSet || !named || !isCompositeType(named)) continue;
        const runtime = isObjectType(named) ? [named] : schema.getPossibleTypes(named);
        for (const r of runtime) run(sel.selectionSet, r);
        continue;
      }
      const frag = sel.kind === Kind.FRAGMENT_SPREAD ? fragments.get(sel.name.value) : sel;
      if (!frag) continue;
      const cond = condition(frag.typeCondition?.name.value, type);
      if (cond === type || (cond && isAbstractType(cond) && schema.isSubType(cond, type))) {
        run(frag.selectionSet, type);
      }
    }
  };
  // As queryCost walks: on the type each selection is written against.
  const walk = (set: SelectionSetNode, parent: GraphQLCompositeType): void => {
    if (!once(set, `walk ${parent.name}`)) return;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const named = keepField(parent, sel.name.value);
        if (sel.selectionSet && named && isCompositeType(named)) walk(sel.selectionSet, named);
        continue;
      }
      const frag = sel.kind === Kind.FRAGMENT_SPREAD ? fragments.get(sel.name.value) : sel;
      if (!frag) continue;
      const cond = condition(frag.typeCondition?.name.value, parent);
      if (cond) walk(frag.selectionSet, cond);
    }
  };
  const roots = new Set<OperationTypeNode>();
  for (const def of document.definitions) {
    if (def.kind !== Kind.OPERATION_DEFINITION) continue;
    const root = schema.getRootType(def.operation);
    if (!root) continue;
    roots.add(def.operation);
    keepType(root);
    for (const v of def.variableDefinitions ?? []) {
      const type = typeFromAST(schema, v.type);
      if (type) keepInput(getNamedType(type));
    }
    run(def.selectionSet, root);
    walk(def.selectionSet, root);
  }
  return sdlOf(schema, fields, leaves, roots);
}

function sdlOf(
  schema: GraphQLSchema,
  fields: ReadonlyMap<string, ReadonlySet<string>>,
  leaves: ReadonlySet<string>,
  roots: ReadonlySet<OperationTypeNode>,
): DocumentNode {
  const definitions: DefinitionNode[] = [];
  const kept = (name: string): boolean => fields.has(name) || leaves.has(name);
  for (const name of [...fields.keys(), ...leaves]) {
    const type = schema.getType(name);
    const node = type?.astNode;
    if (!type || !node) continue; // a built-in scalar
    if (node.kind === Kind.OBJECT_TYPE_DEFINITION || node.kind === Kind.INTERFACE_TYPE_DEFINITION) {
      const names = fields.get(name) ?? new Set<string>();
      definitions.push({
        ...node,
        fields: (node.fields ?? []).filter((f) => names.has(f.name.value)),
        interfaces: (node.interfaces ?? []).filter((i) => kept(i.name.value)),
      });
    } else if (node.kind === Kind.UNION_TYPE_DEFINITION) {
      definitions.push({ ...node, types: (node.types ?? []).filter((t) => kept(t.name.value)) });
    } else if (!isCompositeType(type)) {
      definitions.push(node);
    }
  }
  const operationTypes = [
    OperationTypeNode.QUERY,
    OperationTypeNode.MUTATION,
    OperationTypeNode.SUBSCRIPTION,
  ].flatMap((operation) => {
    const root = schema.getRootType(operation);
    return root && roots.has(operation)
      ? [
          {
            kind: Kind.OPERATION_TYPE_DEFINITION,
            operation,
            type: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: root.name } },
          } as const,
        ]
      : [];
  });
  definitions.push({ kind: Kind.SCHEMA_DEFINITION, operationTypes } as DefinitionNode);
  return { kind: Kind.DOCUMENT, definitions };
}
