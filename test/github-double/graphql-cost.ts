/**
 * GitHub's documented point value of a GraphQL call (primary rate limit): add up the
 * requests needed to fulfil every connection — one per parent object the connection hangs
 * under, assuming every connection returns its full `first`/`last` — divide by 100, round to
 * the nearest whole number; at least 1. Mutations follow the same formula (GitHub documents
 * no other primary cost for them; their 5 points are the secondary per-minute cost).
 *
 * A connection is a field whose type is a `…Connection`. `nodes(ids:)` (a plain list) has as
 * many parents below it as ids are asked for. `nodeCount` is the documented node limit's count
 * (the objects the call may return: every connection's `first`/`last` times its parents).
 */
import {
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

export interface QueryCost {
  /** Points charged against the primary limit. */
  readonly cost: number;
  /** Requests needed to fulfil every connection (before dividing by 100). */
  readonly requests: number;
  readonly nodeCount: number;
}

function argNumber(value: ValueNode | undefined, variables: Record<string, unknown>): number {
  if (!value) return 0;
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) {
    const v = variables[value.name.value];
    return typeof v === 'number' ? v : 0;
  }
  return 0;
}

function argLength(value: ValueNode | undefined, variables: Record<string, unknown>): number {
  if (!value) return 0;
  if (value.kind === Kind.LIST) return value.values.length;
  if (value.kind === Kind.VARIABLE) {
    const v = variables[value.name.value];
    return Array.isArray(v) ? v.length : 0;
  }
  return 0;
}

export function queryCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): QueryCost {
  let requests = 0;
  let nodeCount = 0;
  const root =
    operation.operation === 'mutation'
      ? schema.getMutationType()
      : operation.operation === 'subscription'
        ? schema.getSubscriptionType()
        : schema.getQueryType();
  const walk = (
    set: SelectionSetNode,
    parent: GraphQLCompositeType | null | undefined,
    parents: number,
    seen: ReadonlySet<string>,
  ): void => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.INLINE_FRAGMENT) {
        const type = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        walk(sel.selectionSet, isCompositeType(type) ? type : undefined, parents, seen);
        continue;
      }
      if (sel.kind === Kind.FRAGMENT_SPREAD) {
        const name = sel.name.value;
        const frag = fragments.get(name);
        if (!frag || seen.has(name)) continue;
        const type = schema.getType(frag.typeCondition.name.value);
        walk(
          frag.selectionSet,
          isCompositeType(type) ? type : undefined,
          parents,
          new Set([...seen, name]),
        );
        continue;
      }
      if (!parent || !(isObjectType(parent) || isInterfaceType(parent))) continue;
      const def = parent.getFields()[sel.name.value];
      if (!def) continue;
      const type = getNamedType(def.type);
      const args = new Map((sel.arguments ?? []).map((a) => [a.name.value, a.value]));
      let below = parents;
      if (type.name.endsWith('Connection')) {
        const n = argNumber(args.get('first'), variables) || argNumber(args.get('last'), variables);
        requests += parents;
        nodeCount += parents * n;
        below = parents * n;
      } else if (args.has('ids')) {
        below = parents * argLength(args.get('ids'), variables);
      }
      if (sel.selectionSet && isCompositeType(type)) walk(sel.selectionSet, type, below, seen);
    }
  };
  walk(operation.selectionSet, root, 1, new Set());
  return { cost: Math.max(1, Math.round(requests / 100)), requests, nodeCount };
}
