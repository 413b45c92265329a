/**
 * The ONE list of tolerated differences between GitHub's published contract data (the
 * versions pinned in package.json) and what GitHub really does, each with its reason.
 * Keep it short: every entry is a place where the double trusts us instead of GitHub's
 * own description. docs/testing.md repeats this list for readers.
 */
export interface SpecLag {
  /** operationId, `graphql <operationName>` or `webhook <event.action>`; `*` for any. */
  readonly operation: string;
  /** Matched against the violation message. */
  readonly message: RegExp;
  readonly reason: string;
}

export const SPEC_LAGS: readonly SpecLag[] = [
  {
    operation: '*',
    message: /^status 401 is not a documented response$/,
    reason:
      'GitHub authenticates before routing, so every operation can answer 401 "Bad credentials" / ' +
      '"Requires authentication"; the description lists 401 on only a few operations.',
  },
  {
    operation: '*',
    message: /^status 403 is not a documented response$/,
    reason:
      'GitHub answers 403 "Resource not accessible by integration" to any write the token lacks ' +
      'the permission for; the description lists 403 on only some operations.',
  },
  {
    operation: 'actions/create-workflow-dispatch',
    message: /^status (404|422) is not a documented response$/,
    reason:
      'GitHub answers 404 for an unknown workflow and 422 for a ref that does not exist; the ' +
      'description (23.0.2) documents only 200 and 204.',
  },
  {
    operation: 'issues/update-comment',
    message: /^status 404 is not a documented response$/,
    reason:
      'GitHub answers 404 "Not Found" when the comment was deleted; the description (23.0.2) ' +
      'documents only 200 and 422.',
  },
  {
    operation: 'checks/create',
    message: /^status (404|422) is not a documented response$/,
    reason:
      'GitHub answers 422 "No commit found for SHA" for a head_sha the repository lacks, and ' +
      '404 for a repository the token cannot see; the description (23.0.2) documents only 201.',
  },
  {
    operation: 'checks/update',
    message: /^status (404|422) is not a documented response$/,
    reason:
      'GitHub answers 404 for a check run that does not exist and 422 for `completed` without ' +
      'a conclusion; the description (23.0.2) documents only 200.',
  },
  {
    operation: 'checks/get',
    message: /^status 404 is not a documented response$/,
    reason:
      'GitHub answers 404 for a check run that does not exist; the description documents only 200.',
  },
  {
    operation: 'repos/create-commit-status',
    message: /^status (404|422) is not a documented response$/,
    reason:
      'GitHub answers 422 "No commit found for SHA" for a sha the repository lacks, and 404 for ' +
      'a repository the token cannot see; the description (23.0.2) documents only 201.',
  },
  {
    operation: 'webhook issue_dependencies.blocked_by_added',
    message: /^payload: \/organization is required$/,
    reason:
      'The webhook description requires `organization`, which GitHub cannot send for a ' +
      'repository owned by a user account.',
  },
  {
    operation: 'webhook issue_dependencies.blocked_by_removed',
    message: /^payload: \/organization is required$/,
    reason: 'As for blocked_by_added.',
  },
];

/**
 * Known gaps in the contract data that the double does not paper over: calls that need them
 * fail as violations, so use the alternative named here.
 */
export const KNOWN_GAPS: readonly { readonly gap: string; readonly use: string }[] = [
  {
    gap:
      '@octokit/graphql-schema 15.26.1 lacks Issue.blockedBy / Issue.blocking / ' +
      'Issue.issueDependenciesSummary, Issue.issueType and the addBlockedBy / removeBlockedBy ' +
      'mutations that live GitHub has.',
    use: 'the REST dependency endpoints (`issues/*-dependenc*`, present in @octokit/openapi 23.0.2).',
  },
  {
    gap: '@octokit/webhooks-examples 7.6.1 has no `sub_issues` or `issue_dependencies` examples.',
    use: 'the double builds those payloads from its state and validates them against @octokit/openapi-webhooks.',
  },
];

/** How the double reads GitHub's OpenAPI 3.0 schemas with ajv (JSON Schema draft 7). */
export const READING_RULES: readonly { readonly rule: string; readonly reason: string }[] = [
  {
    rule: '`nullable: true` becomes a type union with `null` (or `anyOf [schema, {type: null}]`)',
    reason: 'OpenAPI 3.0 keyword that JSON Schema does not have.',
  },
  {
    rule: '`oneOf` is read as `anyOf` (and `discriminator` is dropped)',
    reason:
      "GitHub's description puts overlapping schemas under `oneOf` (e.g. `basic-error` and " +
      '`repository-rule-violation-error` for a 409 from contents PUT, private/public user for ' +
      '`GET /user`), so a real GitHub answer matches more than one branch; ajv does not support ' +
      'discriminator `mapping`.',
  },
];

export function isTolerated(operation: string, message: string): boolean {
  return SPEC_LAGS.some(
    (lag) => (lag.operation === '*' || lag.operation === operation) && lag.message.test(message),
  );
}
