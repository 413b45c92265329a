/**
 * A plan written back as its ` ```epicflow ` block: what `plan draft` writes and
 * the GitHub side puts in the issue body. Fields in the plan format's order,
 * defaults left out (`reads: []`, `testsChange: false`), lists of paths and ids
 * on one line. Parsing the block gives the same stories and the same hashes.
 */
import YAML from 'yaml';
import { fenceBlock } from '../epic/sanitize.js';
import type { Story } from '../model.js';

/** A story entry as written: only the fields that say something. */
function entryOf(s: Story): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    id: s.id,
    title: s.title,
    description: s.description,
  };
  if (s.dependsOn.length > 0) entry.dependsOn = [...s.dependsOn];
  entry.owns = [...s.owns];
  if (s.reads.length > 0) entry.reads = [...s.reads];
  if (s.readFirst !== undefined && s.readFirst.length > 0) entry.readFirst = [...s.readFirst];
  if (s.provides.length > 0) entry.provides = [...s.provides];
  if (s.acceptance.length > 0) entry.acceptance = [...s.acceptance];
  if (s.executor !== undefined) entry.executor = s.executor;
  if (s.testsChange) entry.testsChange = true;
  if (s.tasks !== undefined) entry.tasks = s.tasks;
  return entry;
}

/** The YAML of a plan (`stories:` and its entries). */
export function planYaml(stories: readonly Story[]): string {
  const doc = new YAML.Document({ stories: stories.map(entryOf) });
  YAML.visit(doc, {
    Seq(_key, node) {
      // Short lists (paths, ids) on one line; prose lists (acceptance, provides) one item a line.
      const short = node.items.every(
        (i) => YAML.isScalar(i) && typeof i.value === 'string' && !/\s/.test(i.value),
      );
      if (short && node.items.length > 0) node.flow = true;
    },
  });
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

/** The fenced ` ```epicflow ` block of a plan. */
export function renderPlanBlock(stories: readonly Story[]): string {
  return fenceBlock(planYaml(stories), 'epicflow');
}
