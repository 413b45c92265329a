/**
 * GitHub's own contract data: the REST OpenAPI description (@octokit/openapi) and the webhook
 * descriptions (@octokit/openapi-webhooks); the GraphQL schema is in graphql-schema.ts.
 * Validators are compiled lazily per operation and kept on disk (ajv "standalone" code),
 * because compiling the whole description would take seconds.
 *
 * A test file reads only what it uses: the REST description is kept on disk split into a
 * small index of its paths and one file per operation and per example (`restParts`), and the
 * whole description (for `components.schemas`) is read only to compile a validator the disk
 * cache does not have. Every file is a copy of part of the same trimmed description, so each
 * check reads the same schema it read from the whole one.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { _ as Code, Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { testCacheDir } from '../support/cache-dir.js';
import { PathTable, type PathTemplate } from './rest-paths.js';
import {
  cachedFolder,
  cachedJson,
  readJson,
  require,
  saltedName,
  storeFile,
} from './spec-cache.js';

export { githubGraphqlSchema } from './graphql-schema.js';

/**
 * Compiled validators are kept on disk as ajv "standalone" code and reused by every
 * later test file and run: compiling GitHub's large schemas costs a second or two per
 * file that uses the double. An entry is named by a hash of the package versions, the
 * reading rules' source and the operation, so any change recompiles.
 */
const VALIDATORS = testCacheDir('double-validators');

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

const descriptions = new Map<string, Json>();

/**
 * One of GitHub's descriptions, trimmed (`trimmed`): a quarter of the size. Keyed by the
 * package's own path (the salt has its version), so every clone shares it. Read once per
 * test file: a cold compile asks for it once per schema component it adds.
 */
function description(path: string): Json {
  let doc = descriptions.get(path);
  if (doc === undefined) {
    doc = trimmedDescription(path);
    descriptions.set(path, doc);
  }
  return doc;
}

function trimmedDescription(path: string): Json {
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
}

export interface PathMatch {
  readonly operation: SpecOperation;
  readonly params: Record<string, string>;
}

/** What the checks read of one operation: its request body and responses, as described. */
interface OperationParts {
  readonly requestBody?: Json | undefined;
  readonly responses: Record<string, Json>;
}

interface RestIndex {
  readonly paths: PathTemplate[];
  readonly examples: string[];
}

const partName = (kind: string, name: string): string =>
  `${kind}-${createHash('sha256').update(name).digest('hex').slice(0, 24)}.json`;

/** The trimmed REST description split into the files `RestSpec` reads (name → value). */
function restParts(doc: Json): Map<string, unknown> {
  const parts = new Map<string, unknown>();
  const paths: PathTemplate[] = [];
  for (const [template, item] of Object.entries(doc['paths'] as Record<string, Json>)) {
    const methods: Record<string, string> = {};
    for (const [method, op] of Object.entries(item)) {
      const o = op as Json;
      if (typeof o['operationId'] !== 'string') continue;
      methods[method.toUpperCase()] = o['operationId'];
      const kept: OperationParts = {
        requestBody: o['requestBody'] as Json | undefined,
        responses: o['responses'] as Record<string, Json>,
      };
      parts.set(partName('op', `${method.toUpperCase()} ${template}`), kept);
    }
    paths.push({ template, methods });
  }
  const components = doc['components'] as Record<string, Record<string, Json>>;
  const examples = components['examples'] ?? {};
  for (const [name, ex] of Object.entries(examples)) parts.set(partName('example', name), ex);
  parts.set('responses.json', components['responses'] ?? {});
  parts.set('index.json', { paths, examples: Object.keys(examples) } satisfies RestIndex);
  return parts;
}

const REST_BASE = 'https://rest.double.invalid/schemas/';

class RestSpec {
  private readonly file = require.resolve('@octokit/openapi/generated/api.github.com.json');
  private readonly dir: string | undefined;
  /** The description's path templates (read by its own test). */
  readonly table: PathTable;
  private readonly examples: ReadonlySet<string>;
  private readonly store = new SchemaStore(() => this.schemas(), REST_BASE);
  private readonly cache = new Map<string, ValidateFunction | null>();
  private readonly ops = new Map<string, OperationParts>();
  private whole: Map<string, unknown> | undefined;
  private responsesOnce: Record<string, Json> | undefined;

  constructor() {
    const key = `rest parts ${this.file.slice(this.file.lastIndexOf('node_modules'))}`;
    this.dir = cachedFolder(key, () => this.split());
    const index = this.part<RestIndex>('index.json');
    this.table = new PathTable(index.paths);
    this.examples = new Set(index.examples);
  }

  /** The whole description split in memory: made when the disk has no (complete) copy. */
  private split(): Map<string, unknown> {
    this.whole ??= restParts(description(this.file));
    return this.whole;
  }

  private part<T>(name: string): T {
    const kept = this.dir === undefined ? undefined : readJson<T>(join(this.dir, name));
    return kept ?? (this.split().get(name) as T);
  }

  private schemas(): Record<string, Json> {
    const components = description(this.file)['components'] as Record<string, Json>;
    return (components['schemas'] as Record<string, Json> | undefined) ?? {};
  }

  private opOf(operation: SpecOperation): OperationParts {
    const key = `${operation.method} ${operation.template}`;
    let op = this.ops.get(key);
    if (!op) {
      op = this.part<OperationParts>(partName('op', key));
      this.ops.set(key, op);
    }
    return op;
  }

  /** The spec path matching `pathname` (no query), and whether `method` exists on it. */
  match(method: string, pathname: string): PathMatch | { pathOnly: string } | undefined {
    let pathOnly: string | undefined;
    for (const { template, params } of this.table.matches(pathname)) {
      const operationId = template.methods[method];
      if (operationId === undefined) {
        pathOnly ??= template.template;
        continue;
      }
      const decoded: Record<string, string> = {};
      for (const [name, value] of Object.entries(params)) decoded[name] = decodeURIComponent(value);
      return { operation: { method, template: template.template, operationId }, params: decoded };
    }
    return pathOnly === undefined ? undefined : { pathOnly };
  }

  operation(method: string, template: string): SpecOperation | undefined {
    const m = method.toUpperCase();
    const operationId = this.table.get(template)?.methods[m];
    return operationId === undefined ? undefined : { method: m, template, operationId };
  }

  /** Validator of the JSON request body, or null when the operation takes none. */
  requestValidator(operation: SpecOperation): ValidateFunction | null {
    const key = `req ${operation.method} ${operation.template}`;
    if (!this.cache.has(key)) {
      const body = this.opOf(operation).requestBody;
      const content = body?.['content'] as Record<string, Json> | undefined;
      const json = content?.['application/json'];
      this.cache.set(
        key,
        json?.['schema'] === undefined ? null : this.store.compile(key, () => json['schema']),
      );
    }
    return this.cache.get(key) ?? null;
  }

  requestBodyRequired(operation: SpecOperation): boolean {
    return this.opOf(operation).requestBody?.['required'] === true;
  }

  /**
   * Validator of the response for `status`: null when the spec documents the status without
   * a JSON body, undefined when the spec does not document the status at all.
   */
  responseValidator(operation: SpecOperation, status: number): ValidateFunction | null | undefined {
    const key = `res ${operation.method} ${operation.template} ${status}`;
    if (!this.cache.has(key)) {
      let response = this.opOf(operation).responses[String(status)];
      if (response === undefined) return undefined;
      const ref = response['$ref'];
      if (typeof ref === 'string') {
        const name = ref.split('/').pop() ?? '';
        this.responsesOnce ??= this.part<Record<string, Json>>('responses.json');
        response = this.responsesOnce[name] as Json;
      }
      const content = response['content'] as Record<string, Json> | undefined;
      const json = content?.['application/json'] ?? content?.['application/scim+json'];
      this.cache.set(
        key,
        json?.['schema'] === undefined ? null : this.store.compile(key, () => json['schema']),
      );
    }
    return this.cache.get(key) ?? null;
  }

  /** A deep copy of `components.examples[name].value`, the spec's own complete sample object. */
  example(name: string): Json {
    if (!this.examples.has(name)) {
      throw new Error(`no example "${name}" in GitHub's OpenAPI description`);
    }
    return structuredClone(this.part<Json>(partName('example', name))['value']) as Json;
  }
}

class WebhookSpec {
  private readonly file =
    require.resolve('@octokit/openapi-webhooks/generated/api.github.com.json');
  private readonly store = new SchemaStore(() => {
    const components = description(this.file)['components'] as Record<string, Json>;
    return (components['schemas'] as Record<string, Json> | undefined) ?? {};
  }, 'https://hooks.double.invalid/schemas/');
  private readonly cache = new Map<string, ValidateFunction>();

  /**
   * Validator for `event.action` (webhook key `issues-labeled`, `sub-issues-sub-issue-added`).
   * The description is read only when the validator is not in the disk cache: one is there
   * only for a key the description has.
   */
  validator(event: string, action: string | undefined): ValidateFunction {
    const key = [event, action]
      .filter((x): x is string => x !== undefined)
      .join('-')
      .replace(/_/g, '-');
    let v = this.cache.get(key);
    if (!v) {
      v = this.store.compile(key, () => {
        const hooks = description(this.file)['webhooks'] as Record<string, Record<string, Json>>;
        const post = hooks[key]?.['post'];
        if (!post) throw new Error(`no webhook "${key}" in GitHub's webhook description`);
        const body = post['requestBody'] as { content: Record<string, { schema: unknown }> };
        return body.content['application/json']?.schema;
      });
      this.cache.set(key, v);
    }
    return v;
  }
}

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
  private ajvOnce: Ajv | undefined;
  private readonly added = new Set<string>();

  /** `components` is read only when a validator is compiled (not in the cache). */
  constructor(
    private readonly components: () => Record<string, Json>,
    private readonly base: string,
  ) {}

  private get ajv(): Ajv {
    this.ajvOnce ??= compiler().newAjv();
    return this.ajvOnce;
  }

  /**
   * The validator known to the disk cache as `key` (unique per description); made, when the
   * cache has none, from the schema `schemaOf` reads (which may throw: no such schema).
   */
  compile(key: string, schemaOf: () => unknown): ValidateFunction {
    const file = join(VALIDATORS, `${saltedName(`${this.base}\n${key}`)}.cjs`);
    const cached = loadValidator(file);
    if (cached !== undefined) return cached;
    const copy = this.prepare(schemaOf());
    const validate = this.ajv.compile(copy as Json);
    storeFile(file, compiler().standaloneCode(this.ajv, validate));
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
      const component = this.components()[name];
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

/** The default export of a CommonJS module, or the module itself. */
function defaultOf<T>(mod: unknown): T {
  return ((mod as { default?: unknown }).default ?? mod) as T;
}

interface Compiler {
  readonly newAjv: () => Ajv;
  readonly standaloneCode: (ajv: Ajv, validate: ValidateFunction) => string;
}

let compilerOnce: Compiler | undefined;

/**
 * ajv's compiler, its standalone code generator and ajv-formats, loaded only when a
 * validator is compiled: a validator from the disk cache needs only ajv's runtime (about 60
 * modules fewer in every test file that starts a double).
 */
function compiler(): Compiler {
  if (compilerOnce !== undefined) return compilerOnce;
  const { _, Ajv: AjvClass } = require('ajv') as { _: typeof Code; Ajv: typeof Ajv };
  const addFormats = defaultOf<(a: Ajv) => void>(require('ajv-formats'));
  const newAjv = (): Ajv => {
    // inlineRefs: false compiles each component once and shares it between operations;
    // allErrors: false keeps compiling GitHub's large schemas affordable (first error wins).
    const ajv = new AjvClass({
      strict: false,
      allErrors: false,
      validateSchema: false,
      logger: false,
      inlineRefs: false,
      // Keeps the generated code, for the disk cache (formats come from ajv-formats at load).
      code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
    });
    addFormats(ajv);
    return ajv;
  };
  compilerOnce = {
    newAjv,
    standaloneCode: defaultOf(require('ajv/dist/standalone/index.js')),
  };
  return compilerOnce;
}

let rest: RestSpec | undefined;
let hooks: WebhookSpec | undefined;

export function restSpec(): RestSpec {
  rest ??= new RestSpec();
  return rest;
}

export function webhookSpec(): WebhookSpec {
  hooks ??= new WebhookSpec();
  return hooks;
}

export type { RestSpec, WebhookSpec };
