/**
 * The REST description's path templates, matched against a request's path. A template is a
 * regular expression (`{owner}` → `([^/]+)`; `{ref}` and `{path}` last → `(.+)`), tried in one
 * fixed order: most literal text first (`/issues/comments/{id}` before
 * `/issues/{issue_number}/…`), the description's order among equals. A request is tried only
 * against the templates that can match it — those with as many segments and the same literal
 * first and fourth segment (or a parameter there), and those ending in `(.+)` — in that same
 * order, and a template's expression is compiled the first time it is tried.
 */

/** Parameters whose values contain slashes (`heads/epic/1`, `docs/a.md`) when last in a path. */
const GREEDY_PARAMS = new Set(['ref', 'path']);

export interface PathTemplate {
  readonly template: string;
  /** Method (upper case) → operationId. */
  readonly methods: Readonly<Record<string, string>>;
}

interface Compiled {
  readonly order: number;
  readonly template: PathTemplate;
  readonly source: string;
  readonly params: readonly string[];
  regex?: RegExp;
}

export interface TemplateMatch {
  readonly template: PathTemplate;
  readonly params: Record<string, string>;
}

function compile(template: string): {
  source: string;
  params: string[];
  literalLength: number;
  greedy: boolean;
} {
  const params: string[] = [];
  const parts = template.split(/(\{[^}]+\})/);
  let literalLength = 0;
  let greedy = false;
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
      if (GREEDY_PARAMS.has(name) && last) {
        greedy = true;
        return '(.+)';
      }
      return '([^/]+)';
    })
    .join('');
  return { source, params, literalLength, greedy };
}

/** A segment that must be the same in the request: one without a parameter. */
function literal(segment: string | undefined): string {
  return segment === undefined || segment.includes('{') ? '*' : segment;
}

export class PathTable {
  /** Templates by `<segments> <first> <fourth>` (`*` where a parameter stands). */
  private readonly buckets = new Map<string, Compiled[]>();
  /** Templates ending in `(.+)`, which match longer paths too. */
  private readonly greedy: Compiled[] = [];
  private readonly byTemplate = new Map<string, PathTemplate>();

  constructor(templates: readonly PathTemplate[]) {
    const all = templates.map((t, i) => ({ t, i, ...compile(t.template) }));
    // Most literal text first; equals keep the description's order.
    all.sort((a, b) => b.literalLength - a.literalLength || a.i - b.i);
    all.forEach((c, order) => {
      this.byTemplate.set(c.t.template, c.t);
      const entry: Compiled = { order, template: c.t, source: c.source, params: c.params };
      if (c.greedy) {
        this.greedy.push(entry);
        return;
      }
      const s = c.t.template.split('/');
      const key = `${s.length} ${literal(s[1])} ${literal(s[4])}`;
      const bucket = this.buckets.get(key);
      if (bucket) bucket.push(entry);
      else this.buckets.set(key, [entry]);
    });
  }

  templates(): string[] {
    return [...this.byTemplate.keys()];
  }

  get(template: string): PathTemplate | undefined {
    return this.byTemplate.get(template);
  }

  /** Every template that matches `pathname`, in the fixed order. */
  matches(pathname: string): Generator<TemplateMatch> {
    return matching(this.candidates(pathname), pathname);
  }

  private candidates(pathname: string): Compiled[] {
    const s = pathname.split('/');
    const first = s[1] ?? '';
    const fourth = s[4] ?? '';
    const out: Compiled[] = [...this.greedy];
    for (const a of new Set([first, '*'])) {
      for (const b of new Set([fourth, '*'])) {
        const bucket = this.buckets.get(`${s.length} ${a} ${b}`);
        if (bucket) out.push(...bucket);
      }
    }
    return out.sort((x, y) => x.order - y.order);
  }

  /** The same answers by trying every template in order (for the table's own test). */
  linearMatches(pathname: string): Generator<TemplateMatch> {
    const all = [...this.greedy, ...[...this.buckets.values()].flat()];
    return matching(
      all.sort((x, y) => x.order - y.order),
      pathname,
    );
  }
}

/** The templates of `candidates` (in their order) that match `pathname`, with their parameters. */
function* matching(candidates: readonly Compiled[], pathname: string): Generator<TemplateMatch> {
  for (const c of candidates) {
    c.regex ??= new RegExp(`^${c.source}$`);
    const m = c.regex.exec(pathname);
    if (!m) continue;
    const params: Record<string, string> = {};
    c.params.forEach((name, i) => {
      params[name] = m[i + 1] ?? '';
    });
    yield { template: c.template, params };
  }
}
