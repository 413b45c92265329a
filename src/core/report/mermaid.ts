/**
 * The Mermaid graph of an epic: one node per story, coloured by status, one
 * edge per dependency. Story text is untrusted, so node ids are generated
 * (`s0`, `s1`, …) and labels are quoted with every meaningful character
 * replaced by a Mermaid entity code: the graph stays valid whatever the titles hold.
 */
import type { StoryStatus } from '../model.js';
import { STORY_STATUSES } from '../model.js';
import { capText } from './escape.js';
import { statusOf } from './summary.js';
import type { ReportStory } from './types.js';

/** Mermaid's default `maxTextSize`: a longer graph is not rendered at all. */
const MERMAID_MAX_TEXT = 50_000;
/** Mermaid's default `maxEdges`. */
const MERMAID_MAX_EDGES = 500;
/** Characters of `id: title` kept in a node label. */
export const MERMAID_LABEL_MAX = 60;

const CLASS_STYLES: Readonly<Record<StoryStatus, string>> = {
  done: 'fill:#dafbe1,stroke:#1a7f37,color:#0b3d1a',
  failed: 'fill:#ffebe9,stroke:#cf222e,color:#5c0b0b',
  active: 'fill:#ddf4ff,stroke:#0969da,color:#0a2d57',
  waiting: 'fill:#fff8c5,stroke:#9a6700,color:#4d3300',
  planned: 'fill:#f6f8fa,stroke:#8c959f,color:#24292f',
};

const LABEL_ENTITIES: Readonly<Record<string, string>> = {
  '"': '#quot;',
  '&': '#amp;',
  '<': '#lt;',
  '>': '#gt;',
  '#': '#35;',
  '%': '#37;',
  ';': '#59;',
  '[': '#91;',
  '\\': '#92;',
  ']': '#93;',
  '`': '#96;',
  '{': '#123;',
  '|': '#124;',
  '}': '#125;',
};

/**
 * A label safe inside `["…"]`: whitespace and control characters collapse to
 * one space, the text is capped, then each character Mermaid could read as
 * syntax becomes an entity code (capping first so no entity is cut in half).
 */
export function escapeMermaidLabel(text: string, max: number = MERMAID_LABEL_MAX): string {
  const oneLine = text
    // eslint-disable-next-line no-control-regex -- control characters are exactly what we strip
    .replace(/[\s\u0000-\u001f\u007f\u2028\u2029]+/g, ' ')
    .trim();
  return capText(oneLine, max).replace(/["&<>#%;[\\\]`{|}]/g, (c) => LABEL_ENTITIES[c] ?? '');
}

export interface MermaidGraph {
  /** The fenced ```mermaid block. */
  readonly text: string;
  readonly edges: number;
}

/** Builds the graph and says how many edges it has (Mermaid refuses too many). */
export function buildMermaid(stories: readonly ReportStory[]): MermaidGraph {
  const nodeId = new Map<string, string>(stories.map(({ story }, i) => [story.id, `s${i}`]));
  const lines = ['```mermaid', 'flowchart TD'];
  stories.forEach(({ story }, i) => {
    lines.push(`  s${i}["${escapeMermaidLabel(`${story.id}: ${story.title}`)}"]`);
  });
  let edges = 0;
  stories.forEach(({ story }, i) => {
    for (const dep of story.dependsOn) {
      const from = nodeId.get(dep);
      // A dependency outside the listed stories has no node to point from.
      if (from === undefined) continue;
      lines.push(`  ${from} --> s${i}`);
      edges += 1;
    }
  });
  for (const status of STORY_STATUSES) lines.push(`  classDef ${status} ${CLASS_STYLES[status]}`);
  for (const status of STORY_STATUSES) {
    const ids = stories.flatMap((s, i) => (statusOf(s) === status ? [`s${i}`] : []));
    if (ids.length > 0) lines.push(`  class ${ids.join(',')} ${status}`);
  }
  lines.push('```');
  return { text: lines.join('\n'), edges };
}

/** The fenced Mermaid flowchart of the stories (dependency → dependent), nodes styled by status. */
export function renderMermaid(stories: readonly ReportStory[]): string {
  return buildMermaid(stories).text;
}

/** Whether GitHub's Mermaid would render this graph at its default limits. */
export function mermaidFits(graph: MermaidGraph): boolean {
  return graph.text.length <= MERMAID_MAX_TEXT && graph.edges <= MERMAID_MAX_EDGES;
}
