/** Problems of a config file in the order they stand in it. */
import YAML from 'yaml';
import type { Problem } from './issues.js';

/**
 * Sorts problems by where they are in the file, so that they read top to
 * bottom; a missing field sorts at its parent. Stable for equal positions.
 */
export function inDocumentOrder(problems: Problem[], document: YAML.Document): Problem[] {
  const offset = (path: readonly PropertyKey[]): number => {
    for (let depth = path.length; depth >= 0; depth--) {
      const node: unknown = document.getIn(path.slice(0, depth), true);
      if (YAML.isNode(node) && node.range) return node.range[0];
    }
    return 0;
  };
  return problems
    .map((problem, index) => ({ problem, index, at: offset(problem.path) }))
    .sort((a, b) => a.at - b.at || a.index - b.index)
    .map(({ problem }) => problem);
}
