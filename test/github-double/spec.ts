/**
 * GitHub's own contract data, loaded once per process: the REST OpenAPI description
 * (@octokit/openapi), the webhook descriptions (@octokit/openapi-webhooks) and the
 * GraphQL schema (@octokit/graphql-schema). Validators are compiled lazily per
 * operation and cached, because compiling the whole description would take seconds.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { _, Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import addFormatsModule from 'ajv-formats';
import { buildASTSchema, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { testCacheDir } from '../support/cache-dir.js';

const require = createRequire(import.meta.url);

/**
 * Compiled validators are kept on disk as ajv "standalone" code and reused by every
 * later test file and run: compiling GitHub's large schemas costs a second or two per
 * file that uses the double. An entry is named by a hash of the package versions, this
 * file's own source (the reading rules) and the operation, so any change recompiles.
 */
const VALIDATORS = testCacheDir('double-validators');

const standaloneCode = ((standaloneModule as unknown as { default?: unknown }).default ??
  standaloneModule) as unknown as (ajv: Ajv, validate: ValidateFunction) => string;

function versionOf(pkg: string): string {
  return (require(`${pkg}/package.json`) as { version: string }).version;
}

/** What every cache key starts with: the packages and the rules the schemas were read by. */
const CACHE_SALT = createHash('sha256')
  .update(
    [
      versionOf('ajv'),
      versionOf('ajv-formats'),
      versionOf('@octokit/openapi'),
      versionOf('@octokit/openapi-webhooks'),
      readFileSync(fileURLToPath(import.meta.url), 'utf8'),
    ].join('\n'),
  )
  .digest('hex');

/** A cached validator, or undefined when there is none (or it cannot be read). */
function loadValidator(file: string): ValidateFunction | undefined {
  let code: string;
  try {
    code = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const mod: { exports: unknown } = { exports: {} };
  try {
    // The code ajv generated for this very schema; it requires only ajv's own runtime.
    new Function('require', 'module', 'exports', code)(require, mod, mod.exports);
  } catch {
    return undefined; // a cut or corrupt entry: compiled again and rewritten
  }
  return typeof mod.exports === 'function' ? (mod.exports as ValidateFunction) : undefined;
}

function storeFile(file: string, text: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    // Parallel workers may write the same entry: each writes its own file, then renames.
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  } catch {
    // A read-only or full disk only costs the next file a compile.
  }
}

type Json = Record<string, unknown>;

/**
 * A copy of GitHub's description without what no check of the double reads: prose
 * (`description` and `summary` strings) and samples (`example`, `examples`), but for
 * `components.examples`, which `example()` hands out. The keys of a `properties` map are
 * names, kept whatever they are.
 */
function trimmed(node: unknown, names = false): unknown {
  if (Array.isArray(node)) return node.map((n) => trimmed(n));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (!names) {
      if ((k === 'description' || k === 'summary') && typeof v === 'string') continue;
      if (k === 'example' || k === 'examples') continue;
    }
    out[k] = trimmed(v, !names && (k === 'properties' || k === 'patternProperties'));
  }
  return out;
}

const DESCRIPTIONS = testCacheDir('double-descriptions');

/** Drops the copies no run has made for a day (each change of the salt makes new ones). */
function pruneDescriptions(): void {
  try {
    for (const name of readdirSync(DESCRIPTIONS)) {
      const file = join(DESCRIPTIONS, name);
      if (Date.now() - statSync(file).mtimeMs > 24 * 3600_000) rmSync(file, { force: true });
    }
  } catch {
    // none yet, or another worker pruned it meanwhile
  }
}

/**
 * What `make` returns, kept on disk as JSON under `key` (hashed with the salt) and read back
 * by every later file and run; made by the first file that needs it.
 */
function cachedJson<T>(key: string, make: () => T): T {
  const file = join(
    DESCRIPTIONS,
    `${createHash('sha256').update(`${CACHE_SALT}\n${key}`).digest('hex').slice(0, 40)}.json`,
  );
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    // none yet, or cut: made again below
  }
  pruneDescriptions();
  const made = make();
  storeFile(file, JSON.stringify(made));
  return made;
}

/**
 * One of GitHub's descriptions, trimmed (`trimmed`): a quarter of the size, so each test file
 * that starts a double parses 3 MB instead of 13 MB (about 40 ms instead of 250). Keyed by
 * the package's own path (the salt has its version), so every clone shares it.
 */
function description(path: string): Json {
  return cachedJson(path.slice(path.lastIndexOf('node_modules')), () => {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as Json;
    const components = doc['components'] as Json | undefined;
    const out = trimmed(doc) as Json;
    if (components?.['examples'] !== undefined) {
      (out['components'] as Json)['examples'] = components['examples'];
    }
    return out;
  });
}

export interface SpecOperation {
  readonly method: string;
  readonly template: string;
  readonly operationId: string;
  readonly op: Json;
}

interface CompiledPath {
  readonly template: string;
  readonly regex: RegExp;
  readonly params: readonly string[];
  readonly literalLength: number;
  readonly methods: Map<string, SpecOperation>;
}

export interface PathMatch {
  readonly operation: SpecOperation;
  readonly params: Record<string, string>;
}

/** Parameters whose values contain slashes (`heads/epic/1`, `docs/a.md`) when last in a path. */
const GREEDY_PARAMS = new Set(['ref', 'path']);

/**
 * How the double reads GitHub's OpenAPI 3.0 schemas with ajv (see READING_RULES in
 * exceptions.ts): `nullable` becomes a JSON Schema type union, and `oneOf` becomes `anyOf`.
 */
function normalize(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) normalize(n);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const o = node as Json;
  for (const [k, v] of Object.entries(o)) {
    // `example(s)` carry data, not schemas.
    if (k !== 'example' && k !== 'examples') normalize(v);
  }
  if (Array.isArray(o['oneOf'])) {
    o['anyOf'] = o['oneOf'];
    delete o['oneOf'];
    delete o['discriminator'];
  }
  if (o['nullable'] === true) {
    delete o['nullable'];
    if (typeof o['type'] === 'string') {
      o['type'] = [o['type'], 'null'];
      if (Array.isArray(o['enum']) && !o['enum'].includes(null)) o['enum'] = [...o['enum'], null];
    } else {
      const inner: Json = { ...o };
      for (const k of Object.keys(o)) delete o[k];
      o['anyOf'] = [inner, { type: 'null' }];
    }
  }
}

const COMPONENT_REF = '#/components/schemas/';

/**
 * Compiles schemas that `$ref` the description's `components.schemas`, adding only the
 * components actually reached (transitively) to ajv, each normalised once. Registering the
 * whole description up front costs seconds; a test touches a few dozen components.
 */
class SchemaStore {
  private readonly ajv = newAjv();
  private readonly added = new Set<string>();

  constructor(
    private readonly components: Record<string, Json>,
    private readonly base: string,
  ) {}

  /** The validator of `schema`, known to the disk cache as `key` (unique per description). */
  compile(schema: unknown, key: string): ValidateFunction {
    const name = createHash('sha256').update(`${CACHE_SALT}\n${this.base}\n${key}`).digest('hex');
    const file = join(VALIDATORS, `${name.slice(0, 40)}.cjs`);
    const cached = loadValidator(file);
    if (cached !== undefined) return cached;
    const copy = this.prepare(schema);
    const validate = this.ajv.compile(copy as Json);
    storeFile(file, standaloneCode(this.ajv, validate));
    return validate;
  }

  private prepare(schema: unknown): unknown {
    const copy = structuredClone(schema);
    normalize(copy);
    const pending: string[] = [];
    this.rewriteRefs(copy, pending);
    while (pending.length > 0) {
      const name = pending.pop() ?? '';
      if (this.added.has(name)) continue;
      this.added.add(name);
      const component = this.components[name];
      if (component === undefined) throw new Error(`no schema component "${name}"`);
      const c = structuredClone(component);
      normalize(c);
      this.rewriteRefs(c, pending);
      this.ajv.addSchema(c as Json, this.base + name);
    }
    return copy;
  }

  private rewriteRefs(node: unknown, pending: string[]): void {
    if (Array.isArray(node)) {
      for (const n of node) this.rewriteRefs(n, pending);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const o = node as Json;
    for (const [k, v] of Object.entries(o)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(COMPONENT_REF)) {
        const name = v.slice(COMPONENT_REF.length);
        o[k] = this.base + name;
        if (!this.added.has(name)) pending.push(name);
      } else if (k !== 'example' && k !== 'examples') {
        this.rewriteRefs(v, pending);
      }
    }
  }
}

export function formatAjvErrors(errors: readonly ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'invalid';
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const e of errors) {
    const field =
      e.keyword === 'required'
        ? `${e.instancePath}/${String((e.params as { missingProperty?: string }).missingProperty)}`
        : e.instancePath || '(root)';
    const line =
      e.keyword === 'required' ? `${field} is required` : `${field} ${e.message ?? 'is invalid'}`;
    if (!seen.has(line)) {
      seen.add(line);
      lines.push(line);
    }
    if (lines.length >= 8) break;
  }
  return lines.join('; ');
}

class RestSpec {
  readonly doc: Json;
  private readonly paths: CompiledPath[] = [];
  private readonly store: SchemaStore;
  private readonly cache = new Map<string, ValidateFunction | null>();

  constructor() {
    this.doc = description(require.resolve('@octokit/openapi/generated/api.github.com.json'));
    const components = this.doc['components'] as Record<string, Record<string, Json>>;
    this.store = new SchemaStore(
      components['schemas'] ?? {},
      'https://rest.double.invalid/schemas/',
    );
    for (const [template, item] of Object.entries(this.doc['paths'] as Record<string, Json>)) {
      const params: string[] = [];
      const parts = template.split(/(\{[^}]+\})/);
      let literalLength = 0;
      const source = parts
        .map((part, i) => {
          const m = /^\{([^}]+)\}$/.exec(part);
          if (!m) {
            literalLength += part.length;
            return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
          }
          const name = m[1] ?? '';
          params.push(name);
          const last = i >= parts.length - 2;
          return GREEDY_PARAMS.has(name) && last ? '(.+)' : '([^/]+)';
        })
        .join('');
      const methods = new Map<string, SpecOperation>();
      for (const [method, op] of Object.entries(item)) {
        const o = op as Json;
        if (typeof o['operationId'] !== 'string') continue;
        methods.set(method.toUpperCase(), {
          method: method.toUpperCase(),
          template,
          operationId: o['operationId'],
          op: o,
        });
      }
      this.paths.push({
        template,
        regex: new RegExp(`^${source}$`),
        params,
        literalLength,
        methods,
      });
    }
    // Most literal text first, so `/issues/comments/{id}` wins over `/issues/{issue_number}/…`.
    this.paths.sort((a, b) => b.literalLength - a.literalLength);
  }

  /** The spec path matching `pathname` (no query), and whether `method` exists on it. */
  match(method: string, pathname: string): PathMatch | { pathOnly: string } | undefined {
    let pathOnly: string | undefined;
    for (const p of this.paths) {
      const m = p.regex.exec(pathname);
      if (!m) continue;
      const operation = p.methods.get(method);
      if (!operation) {
        pathOnly ??= p.template;
        continue;
      }
      const params: Record<string, string> = {};
      p.params.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] ?? '');
      });
      return { operation, params };
    }
    return pathOnly === undefined ? undefined : { pathOnly };
  }

  operation(method: string, template: string): SpecOperation | undefined {
    return this.paths.find((p) => p.template === template)?.methods.get(method.toUpperCase());
  }

  /** Validator of the JSON request body, or null when the operation takes none. */
  requestValidator(operation: SpecOperation): ValidateFunction | null {
    const key = `req ${operation.method} ${operation.template}`;
    if (!this.cache.has(key)) {
      const body = operation.op['requestBody'] as Json | undefined;
      const content = body?.['content'] as Record<string, Json> | undefined;
      const json = content?.['application/json'];
      this.cache.set(
        key,
        json?.['schema'] === undefined ? null : this.store.compile(json['schema'], key),
      );
    }
    return this.cache.get(key) ?? null;
  }

  requestBodyRequired(operation: SpecOperation): boolean {
    return (operation.op['requestBody'] as Json | undefined)?.['required'] === true;
  }

  /**
   * Validator of the response for `status`: null when the spec documents the status without
   * a JSON body, undefined when the spec does not document the status at all.
   */
  responseValidator(operation: SpecOperation, status: number): ValidateFunction | null | undefined {
    const key = `res ${operation.method} ${operation.template} ${status}`;
    if (!this.cache.has(key)) {
      const responses = operation.op['responses'] as Record<string, Json>;
      let response = responses[String(status)];
      if (response === undefined) return undefined;
      const ref = response['$ref'];
      if (typeof ref === 'string') {
        const name = ref.split('/').pop() ?? '';
        response = (this.doc['components'] as Record<string, Record<string, Json>>)['responses']?.[
          name
        ] as Json;
      }
      const content = response['content'] as Record<string, Json> | undefined;
      const json = content?.['application/json'] ?? content?.['application/scim+json'];
      this.cache.set(
        key,
        json?.['schema'] === undefined ? null : this.store.compile(json['schema'], key),
      );
    }
    return this.cache.get(key) ?? null;
  }

  /** A deep copy of `components.examples[name].value`, the spec's own complete sample object. */
  example(name: string): Json {
    const ex = (this.doc['components'] as Record<string, Record<string, Json>>)['examples']?.[name];
    if (!ex) throw new Error(`no example "${name}" in GitHub's OpenAPI description`);
    return structuredClone(ex['value']) as Json;
  }
}

class WebhookSpec {
  private readonly store: SchemaStore;
  private readonly cache = new Map<string, ValidateFunction>();
  readonly doc: Json;

  constructor() {
    this.doc = description(
      require.resolve('@octokit/openapi-webhooks/generated/api.github.com.json'),
    );
    const components = this.doc['components'] as Record<string, Record<string, Json>>;
    this.store = new SchemaStore(
      components['schemas'] ?? {},
      'https://hooks.double.invalid/schemas/',
    );
  }

  /** Validator for `event.action` (webhook key `issues-labeled`, `sub-issues-sub-issue-added`). */
  validator(event: string, action: string | undefined): ValidateFunction {
    const key = [event, action]
      .filter((x): x is string => x !== undefined)
      .join('-')
      .replace(/_/g, '-');
    let v = this.cache.get(key);
    if (!v) {
      const hooks = this.doc['webhooks'] as Record<string, Record<string, Json>>;
      const post = hooks[key]?.['post'];
      if (!post) throw new Error(`no webhook "${key}" in GitHub's webhook description`);
      const body = post['requestBody'] as { content: Record<string, { schema: unknown }> };
      v = this.store.compile(body.content['application/json']?.schema, key);
      this.cache.set(key, v);
    }
    return v;
  }
}

function newAjv(): Ajv {
  // inlineRefs: false compiles each component once and shares it between operations;
  // allErrors: false keeps compiling GitHub's large schemas affordable (first error wins).
  const ajv = new Ajv({
    strict: false,
    allErrors: false,
    validateSchema: false,
    logger: false,
    inlineRefs: false,
    // Keeps the generated code, for the disk cache (formats come from ajv-formats at load).
    code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
  });
  // ajv-formats ships CommonJS with a default export; under ESM interop it may be nested.
  const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
    addFormatsModule) as unknown as (a: Ajv) => void;
  addFormats(ajv);
  return ajv;
}

let rest: RestSpec | undefined;
let hooks: WebhookSpec | undefined;
let graphqlSchema: GraphQLSchema | undefined;

export function restSpec(): RestSpec {
  rest ??= new RestSpec();
  return rest;
}

export function webhookSpec(): WebhookSpec {
  hooks ??= new WebhookSpec();
  return hooks;
}

export function githubGraphqlSchema(): GraphQLSchema {
  if (!graphqlSchema) {
    // The package's `exports` hide schema.graphql (and its index parses schema.json eagerly).
    const file = (require.resolve.paths('@octokit/graphql-schema') ?? [])
      .map((dir) => join(dir, '@octokit', 'graphql-schema', 'schema.graphql'))
      .find((f) => existsSync(f));
    if (!file) throw new Error('@octokit/graphql-schema is not installed');
    // GitHub's published schema, not ours to check: graphql-js's own check of it (run on
    // its first use) costs about 40 ms in every file; documents are still validated against it.
    graphqlSchema = buildASTSchema(graphqlDocument(file), {
      assumeValidSDL: true,
      assumeValid: true,
    });
  }
  return graphqlSchema;
}

/**
 * The schema's SDL parsed (without source locations: no error points into the schema's
 * text), kept by the SDL's own hash (`cachedJson`): reading that back takes a third of the
 * time of parsing the SDL again in every file that starts a double. The published SDL
 * repeats two EnterpriseOwnerInfo fields; SDL validation is skipped so it loads.
 */
function graphqlDocument(file: string): DocumentNode {
  const sdl = readFileSync(file, 'utf8');
  return cachedJson(`graphql ${versionOf('graphql')}\n${sdl}`, () =>
    parse(sdl, { noLocation: true }),
  );
}

export type { RestSpec, WebhookSpec };
