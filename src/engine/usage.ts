import { addTokens, type UsageEntry } from '../core/model.js';

/** Adds usage entries, one per executor, model and kind (measured or estimated). */
export function mergeUsage(into: readonly UsageEntry[], more: readonly UsageEntry[]): UsageEntry[] {
  const out = [...into];
  for (const u of more) {
    const i = out.findIndex(
      (o) => o.executor === u.executor && o.model === u.model && o.measured === u.measured,
    );
    const prev = out[i];
    if (prev === undefined) {
      out.push(u);
      continue;
    }
    const costUsd =
      prev.costUsd === null && u.costUsd === null ? null : (prev.costUsd ?? 0) + (u.costUsd ?? 0);
    out[i] = {
      ...prev,
      tokens: addTokens(prev.tokens, u.tokens),
      costUsd,
      costSource: prev.costSource === 'none' ? u.costSource : prev.costSource,
    };
  }
  return out;
}
