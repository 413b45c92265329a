/**
 * The secret scan of a story's commits before they are pushed: the values of the secrets
 * the publish job holds, and token formats that are credentials wherever they appear.
 * Only what the commits add is read (added lines and commit messages): what was there
 * before the story is the epic's already. A finding never carries the value, only a
 * redacted form of it.
 */

/** One commit of the story, as the publish side reads it from the objects. */
export interface ScannedCommit {
  readonly sha: string;
  readonly message: string;
  /** The commit's unified diff against its first parent, every file as text. */
  readonly patch: string;
}

interface SecretFinding {
  /** What was found: `GitHub token`, `a secret of the publish job`, … */
  readonly kind: string;
  /** Where: `commit 1a2b3c4d5e6f, src/a.ts` or `commit 1a2b3c4d5e6f, its message`. */
  readonly where: string;
  /** The value as it may be shown: a known prefix and stars, never the rest of it. */
  readonly redacted: string;
}

/** Token formats that are credentials wherever they appear. */
const FORMATS: readonly {
  readonly kind: string;
  readonly pattern: RegExp;
  readonly keep: number;
}[] = [
  { kind: 'GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g, keep: 4 },
  { kind: 'GitHub token', pattern: /\bgithub_pat_[A-Za-z0-9_]{22,}/g, keep: 11 },
  { kind: 'AWS access key', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, keep: 4 },
  {
    kind: 'private key',
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g,
    keep: Number.POSITIVE_INFINITY,
  },
  { kind: 'model API key', pattern: /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/g, keep: 3 },
];

/** Secret values shorter than this are not looked for: they would match ordinary text. */
const MIN_SECRET_LENGTH = 8;

/** `keep` characters of `value`, then stars: enough to tell which token, never to use it. */
export function redact(value: string, keep = 0): string {
  if (keep >= value.length) return value;
  return `${value.slice(0, keep)}${'*'.repeat(8)}`;
}

/**
 * What a patch adds, each with the file it adds it to: its lines, and the file names
 * themselves (a name is pushed as much as a line is).
 */
function addedLines(patch: string): { readonly file: string; readonly text: string }[] {
  const out: { file: string; text: string }[] = [];
  let file = '';
  for (const line of patch.split('\n')) {
    if (line.startsWith('+++ ')) {
      file = line.slice(4).replace(/^b\//, '');
      out.push({ file, text: file });
      continue;
    }
    if (line.startsWith('diff --git ')) {
      // A file without a `+++` line (a mode change, a binary one): named by its header.
      file = line.slice('diff --git '.length).replace(/^a\/.* b\//, '');
      out.push({ file, text: file });
      continue;
    }
    if (line.startsWith('+')) out.push({ file, text: line.slice(1) });
  }
  return out;
}

/** Every credential the story's commits add, once per kind, place and value. */
export function scanForSecrets(input: {
  readonly commits: readonly ScannedCommit[];
  /** Values of the secrets the job holds (tokens, keys): none may leave in a commit. */
  readonly secrets: readonly string[];
}): SecretFinding[] {
  return scanTextsForSecrets(
    input.commits.flatMap((commit) => {
      const short = commit.sha.slice(0, 12);
      return [
        { where: `commit ${short}, its message`, text: commit.message },
        ...addedLines(commit.patch).map(({ file, text }) => ({
          where: `commit ${short}, ${file}`,
          text,
        })),
      ];
    }),
    input.secrets,
  );
}

/** Every credential in these texts (each named by where it is), once per kind, place and value. */
export function scanTextsForSecrets(
  texts: readonly { readonly where: string; readonly text: string }[],
  secrets: readonly string[],
): SecretFinding[] {
  const values = [...new Set(secrets)]
    .filter((s) => s.length >= MIN_SECRET_LENGTH)
    // Longest first: a secret inside a longer one is reported as the longer one.
    .sort((a, b) => b.length - a.length);
  const findings: SecretFinding[] = [];
  const seen = new Set<string>();
  // A place is named by its file, and a file name may hold what was found: redacted too.
  const hide = (text: string): string => {
    let out = text;
    for (const value of values) out = out.split(value).join(redact(value));
    for (const { pattern, keep } of FORMATS) out = out.replace(pattern, (m) => redact(m, keep));
    return out;
  };
  const add = (found: SecretFinding): void => {
    const finding = { ...found, where: hide(found.where) };
    const key = `${finding.kind}\0${finding.where}\0${finding.redacted}`;
    if (seen.has(key)) return;
    seen.add(key);
    findings.push(finding);
  };
  const scan = (text: string, where: string): void => {
    let rest = text;
    for (const value of values) {
      if (!rest.includes(value)) continue;
      add({ kind: 'a secret of the publish job', where, redacted: redact(value) });
      rest = rest.split(value).join(' ');
    }
    for (const { kind, pattern, keep } of FORMATS) {
      for (const match of rest.matchAll(pattern)) {
        add({ kind, where, redacted: redact(match[0], keep) });
      }
    }
  };
  for (const { where, text } of texts) scan(text, where);
  return findings;
}

/** One line per finding, for the refusal's details. */
export function describeSecrets(findings: readonly SecretFinding[]): string[] {
  return findings.map((f) => `${f.where}: ${f.kind} (${f.redacted})`);
}
