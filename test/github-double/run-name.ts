/**
 * A dispatched run's name and title, as GitHub derives them from the workflow file at
 * the dispatched commit: `name` is the workflow's `name` (the file name without one),
 * and the title (`display_title`) is the evaluated top-level `run-name`, or the
 * workflow's name when there is none.
 *
 * Only the `inputs` context is evaluated (`${{ inputs.NAME }}` and
 * `${{ github.event.inputs.NAME }}`: the dispatch input, else the input's declared
 * default, else empty). Any other expression is not evaluated and stays in the title as
 * written, so a test that relies on one sees it literally rather than a made-up value.
 */
import YAML from 'yaml';

export interface RunNaming {
  readonly name: string;
  readonly displayTitle: string;
}

const INPUT = /\$\{\{\s*(?:github\.event\.)?inputs\.([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g;

export function runNaming(
  workflowText: string | undefined,
  path: string,
  inputs: Readonly<Record<string, unknown>>,
): RunNaming {
  const fileName = path.split('/').pop() ?? path;
  let doc: unknown;
  try {
    doc = workflowText === undefined ? undefined : YAML.parse(workflowText);
  } catch {
    // An unparsable workflow still gets a run here; its title is its name.
    doc = undefined;
  }
  const wf = isRecord(doc) ? doc : {};
  const name = typeof wf['name'] === 'string' ? wf['name'] : fileName;
  const runName = wf['run-name'];
  if (typeof runName !== 'string') return { name, displayTitle: name };
  const defaults = declaredDefaults(wf);
  const displayTitle = runName.replace(INPUT, (_, input: string) => {
    const value = inputs[input] ?? defaults[input];
    return value === undefined || value === null ? '' : String(value);
  });
  return { name, displayTitle };
}

/** `on.workflow_dispatch.inputs.<name>.default` of the workflow. */
function declaredDefaults(wf: Record<string, unknown>): Record<string, unknown> {
  const on = wf['on'];
  const dispatch = isRecord(on) ? on['workflow_dispatch'] : undefined;
  const inputs = isRecord(dispatch) ? dispatch['inputs'] : undefined;
  if (!isRecord(inputs)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(inputs)) {
    if (isRecord(spec) && spec['default'] !== undefined) out[key] = spec['default'];
  }
  return out;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
