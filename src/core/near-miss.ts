/**
 * The known name a person most likely meant by an unknown one, for "did you mean …?" in the
 * plan's and the config's errors: the same rule for both.
 */

/**
 * A known name for an unknown one: a word another tool uses for it (`aliases`, checked
 * first, case and `-`/`_` aside), else the closest known name with case and `-`/`_`
 * forgiven and one typo (names of four letters or fewer) or two (longer ones). Undefined
 * when nothing is that close.
 */
export function nearMiss(
  key: string,
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string | undefined {
  const normal = norm(key);
  for (const [word, name] of Object.entries(aliases)) {
    if (norm(word) === normal && known.includes(name)) return name;
  }
  // Unknown keys may be long; field names are short: a long one is no near miss.
  if (normal.length > 64) return undefined;
  const limit = normal.length <= 4 ? 1 : 2;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(normal, norm(name));
    if (distance <= limit && (best === undefined || distance < best.distance)) {
      best = { name, distance };
    }
  }
  return best?.name;
}

function norm(s: string): string {
  return s.toLowerCase().replace(/[-_]/g, '');
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
