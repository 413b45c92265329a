/**
 * What `epicflow init` writes, as pure functions of the templates and the choices: the
 * roster entry of each known agent, the `.github/epicflow.yml` text, the workflow
 * templates adapted to the chosen executors and the release tag, and the steps left to
 * the user. The CLI (`src/cli/commands/init.ts`) reads the templates and writes files.
 */
import YAML, { isMap, isScalar, isSeq, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import { EpicflowError } from '../errors.js';
import type { RunnerStep } from './runner-steps.js';
import type { DetectedPackage } from './packages.js';

export {
  detectionPaths,
  initDefaults,
  MANAGER_LOCKFILES,
  wantsFile,
  wantsText,
  type RepoFacts,
} from './detect.js';
export { nodeVersionFile, runnerSteps } from './runner-steps.js';
export { detectPackages, packageTextPaths, WORKSPACE_FILES } from './packages.js';
export { appFolder, commandFolder } from './app-folder.js';
export {
  detectionNotes,
  leftToDetection,
  withDetected,
  type DetectionFiles,
  type LeftToDetection,
} from './detected-config.js';

/** How epicflow runs a story: the App decides (story workflow only), or the orchestrate workflow does. */
export type InitMode = 'app' | 'appless';

/**
 * Which template becomes which file, per mode. The templates are the files in
 * `examples/workflows/` of the package (the ones the project's tests validate); change
 * the names here when they change.
 */
export const WORKFLOW_TEMPLATES: Readonly<
  Record<InitMode, readonly { readonly template: string; readonly target: string }[]>
> = {
  // The jobs act as the App (its tokens make every write; GITHUB_TOKEN stays read-only).
  app: [
    {
      template: 'examples/workflows/app/epicflow-story.yml',
      target: '.github/workflows/epicflow-story.yml',
    },
  ],
  // No App: the orchestrate workflow decides, and the jobs use GITHUB_TOKEN with write scopes.
  appless: [
    {
      template: 'examples/workflows/github-token/epicflow-story.yml',
      target: '.github/workflows/epicflow-story.yml',
    },
    {
      template: 'examples/workflows/github-token/epicflow-orchestrate.yml',
      target: '.github/workflows/epicflow-orchestrate.yml',
    },
  ],
};

export const CONFIG_TARGET = '.github/epicflow.yml';

/** A known agent: its roster entry, the secret it needs and how a runner installs it. */
interface AgentPreset {
  readonly id: string;
  readonly harness: 'codex' | 'claude' | 'gemini' | 'opencode' | 'aider';
  readonly model: string;
  /** The repository secret holding its API key (handed to the agent as `${NAME}`). */
  readonly secret: string;
  /**
   * An npm package (at a pinned version) the story job installs globally, or a shell command
   * for others. codex and claude are pinned to the versions the tests run for real (the
   * pinned agent CLIs of test/agent-clis/package.json; test/cli/init.test.ts checks they
   * agree), the others to the
   * versions their recorded fixtures come from.
   */
  readonly install: { readonly npm: string } | { readonly run: string };
}

export const AGENT_PRESETS: readonly AgentPreset[] = [
  {
    id: 'codex',
    harness: 'codex',
    model: 'gpt-5.6',
    secret: 'OPENAI_API_KEY',
    install: { npm: '@openai/codex@0.171.0' },
  },
  {
    id: 'claude',
    harness: 'claude',
    model: 'claude-sonnet-4-5',
    secret: 'ANTHROPIC_API_KEY',
    install: { npm: '@anthropic-ai/claude-code@2.1.197' },
  },
  {
    id: 'gemini',
    harness: 'gemini',
    model: 'gemini-2.5-pro',
    secret: 'GEMINI_API_KEY',
    install: { npm: '@google/gemini-cli@0.61.0' },
  },
  {
    id: 'opencode',
    harness: 'opencode',
    model: 'anthropic/claude-sonnet-4-5',
    secret: 'ANTHROPIC_API_KEY',
    install: { npm: 'opencode-ai@1.18.33' },
  },
  {
    id: 'aider',
    harness: 'aider',
    model: 'gpt-5.6',
    secret: 'OPENAI_API_KEY',
    install: { run: 'pipx install aider-chat==0.86.2' },
  },
];

/** Without `--executor`: the pair the starter configuration uses. */
const DEFAULT_AGENTS: readonly string[] = ['codex', 'claude'];

/** The presets for these ids, in the order given; a usage error names an unknown or repeated id. */
export function choosePresets(ids: readonly string[]): AgentPreset[] {
  const known = AGENT_PRESETS.map((p) => p.id);
  const chosen: AgentPreset[] = [];
  for (const id of ids.length === 0 ? DEFAULT_AGENTS : ids) {
    const preset = AGENT_PRESETS.find((p) => p.id === id);
    if (preset === undefined) {
      throw new EpicflowError('usage', `unknown executor "${id}"`, {
        details: [`--executor takes one of: ${known.join(', ')}`],
      });
    }
    if (chosen.includes(preset)) {
      throw new EpicflowError('usage', `--executor ${id} is given twice`);
    }
    chosen.push(preset);
  }
  return chosen;
}

/** The secrets these agents need, each once, in order. */
function agentSecrets(presets: readonly AgentPreset[]): string[] {
  return [...new Set(presets.map((p) => p.secret))];
}

interface ConfigChoices {
  readonly presets: readonly AgentPreset[];
  /** The setup command (`initDefaults`) and where its parts came from; undefined: none. */
  readonly setup: { readonly command: string; readonly from: string } | undefined;
  /** The gates (`initDefaults`); empty: the user fills them in. */
  readonly gates: readonly { readonly command: string; readonly from: string }[];
  /** The packages found inside the repository (`detectPackages`), each with its checks. */
  readonly packages?: readonly DetectedPackage[];
  /** The package version, for the editor schema of that release. */
  readonly version: string;
}

/** The repository on GitHub whose release tags carry the Action and `schema.json`. */
export const REPOSITORY = 'epicflow/epicflow';

/** The config's JSON Schema at the release tag of `version` (every release tag carries it). */
export function schemaUrl(version: string): string {
  return `https://raw.githubusercontent.com/${REPOSITORY}/v${version}/schema.json`;
}

/** A command as a YAML scalar: plain when that reads back the same, quoted otherwise. */
function scalar(command: string): string {
  return YAML.stringify(command, { lineWidth: 0 }).trim();
}

/** `.github/epicflow.yml` for these agents: a roster entry each, the repository's checks. */
export function renderConfig(choices: ConfigChoices): string {
  const lines = [
    '# epicflow configuration, written by `epicflow init`. Every key is optional; the reference',
    "# is docs/config.md of the epicflow package. Each executor's env names the repository secret",
    '# the story workflow hands it (the same names in its `env:`).',
    `# yaml-language-server: $schema=${schemaUrl(choices.version)}`,
    'executors:',
  ];
  choices.presets.forEach((p, index) => {
    lines.push(
      `  - id: ${p.id}`,
      `    harness: ${p.harness}`,
      `    model: ${p.model}`,
      '    slots: 2',
      `    priority: ${index + 1}`,
      '    roles: [coder, planner]',
      `    env: { ${p.secret}: '\${${p.secret}}' }`,
    );
  });
  const from = (f: string): string => `  # ${f}`;
  if (choices.setup !== undefined || choices.gates.length > 0) {
    lines.push('# Found in the repository; each command names the file it came from. Edit freely.');
  }
  if (choices.setup !== undefined) {
    lines.push(
      '# Run once per story job before the agent starts.',
      `setup: ${scalar(choices.setup.command)}${from(choices.setup.from)}`,
    );
  }
  if (choices.gates.length > 0) {
    lines.push('# The commands that must pass after each agent turn and before a story merges.');
    lines.push('gates:', ...choices.gates.map((g) => `  - ${scalar(g.command)}${from(g.from)}`));
  } else if (choices.setup !== undefined) {
    lines.push(
      '# The commands that must pass before a story merges, e.g. [npm test]. With none, stories',
      '# are judged by the perimeter alone.',
      'gates: []',
    );
  } else {
    lines.push(
      '# The commands that must pass before a story merges, e.g. [make test]; and a setup command',
      '# run once per story job before the agent starts (setup: make deps). With no gates,',
      '# stories are judged by the perimeter alone.',
      'gates: []',
    );
  }
  lines.push(...packageLines(choices.packages ?? []));
  lines.push('fixRounds: 2', 'concurrency: 4', 'timeouts: { story: 60m, gate: 20m }', '');
  return lines.join('\n');
}

/** The `packages:` of the config: each package's folder, setup and gates, and where each came from. */
function packageLines(packages: readonly DetectedPackage[]): string[] {
  if (packages.length === 0) return [];
  const from = (f: string): string => `  # ${f}`;
  const lines = [
    "# Packages found inside the repository: a story runs the root's checks and, in its folder,",
    '# those of each package its owns touch; the merged tree runs those of every package the',
    "# epic's stories touch. `packages: []`: none.",
    'packages:',
  ];
  for (const p of packages) {
    lines.push(`  - path: ${scalar(p.path)}${from(p.from)}`);
    if (p.setup !== undefined) {
      lines.push(`    setup: ${scalar(p.setup)}${from(p.setupFrom.map((s) => s.from).join(', '))}`);
    }
    if (p.gates.length === 0) lines.push('    gates: []');
    else
      lines.push(
        '    gates:',
        ...p.gates.map((g) => `      - ${scalar(g.command)}${from(g.from)}`),
      );
  }
  return lines;
}

interface TemplateStep {
  readonly node: YAMLMap;
  /** The job's steps it is one of. */
  readonly list: YAMLSeq;
  readonly uses: string | undefined;
  readonly run: string | undefined;
  readonly mode: string | undefined;
  /** A story's job it runs in (`work`, `publish`), when the template says. */
  readonly phase: string | undefined;
}

function steps(doc: Document): TemplateStep[] {
  const jobs = doc.get('jobs');
  if (!isMap(jobs)) return [];
  const out: TemplateStep[] = [];
  for (const job of jobs.items) {
    const list = isMap(job.value) ? job.value.get('steps') : undefined;
    if (!isSeq(list)) continue;
    for (const item of list.items) {
      if (!isMap(item)) continue;
      const withNode = item.get('with');
      const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
      out.push({
        node: item,
        list,
        uses: str(item.get('uses')),
        run: str(item.get('run')),
        mode: isMap(withNode) ? str(withNode.get('mode')) : undefined,
        phase: isMap(withNode) ? str(withNode.get('phase')) : undefined,
      });
    }
  }
  return out;
}

/** `owner/epicflow@ref`: the epicflow Action in a template. */
const ACTION_USES = /^([A-Za-z0-9_.-]+\/epicflow)@\S+$/;

/**
 * A workflow template as `init` writes it: the epicflow Action at `ref` (`v<major>`); in
 * the story workflow, the chosen agents' CLIs installed and exactly their secrets in the
 * Action's `env`. Comments and layout are kept. A template without those steps is a
 * broken package, named with its file.
 */
export function adaptWorkflow(
  template: string,
  text: string,
  options: {
    readonly presets: readonly AgentPreset[];
    readonly ref: string;
    /** The default branch: the orchestrate workflow's `on.push.branches`. */
    readonly branch: string;
    /** Toolchains the gates need (`runnerSteps`), set up after Node in the story job. */
    readonly runner?: {
      readonly steps: readonly RunnerStep[];
      /** `.nvmrc` or `.node-version`: setup-node reads the version from it. */
      readonly nodeVersionFile?: string | undefined;
    };
  },
): string {
  const doc = YAML.parseDocument(text);
  if (doc.errors.length > 0) {
    throw new EpicflowError(
      'internal',
      `template ${template} is not valid YAML: ${doc.errors[0]?.message ?? ''}`,
    );
  }
  const all = steps(doc);
  const actions = all.filter((s) => s.uses !== undefined && ACTION_USES.test(s.uses));
  if (actions.length === 0) {
    throw new EpicflowError(
      'internal',
      `template ${template} has no step using the epicflow Action`,
    );
  }
  for (const step of actions) {
    const uses = step.node.get('uses', true);
    if (isScalar(uses)) uses.value = String(uses.value).replace(ACTION_USES, `$1@${options.ref}`);
  }
  const push = doc.getIn(['on', 'push', 'branches'], true);
  if (isSeq(push)) {
    const first = push.items[0];
    push.items = [
      isScalar(first)
        ? Object.assign(first, { value: options.branch })
        : doc.createNode(options.branch),
    ];
  }
  const story = actions.filter((s) => s.mode === 'story');
  if (story.length === 0) return doc.toString({ lineWidth: 0 });

  // One in each job that runs agents (a story's work job, the job of planning and landing).
  const install = all.filter((s) => s.run !== undefined && /\bnpm install -g\b/.test(s.run));
  if (install.length === 0) {
    throw new EpicflowError(
      'internal',
      `template ${template} has no agent install step (a run: with "npm install -g")`,
    );
  }
  const npm = options.presets.flatMap((p) => ('npm' in p.install ? [p.install.npm] : []));
  const others = options.presets.flatMap((p) => ('run' in p.install ? [p.install.run] : []));
  const commands = [...(npm.length > 0 ? [`npm install -g ${npm.join(' ')}`] : []), ...others];
  for (const step of install) {
    step.node.set('run', commands.length === 1 ? commands[0] : `${commands.join('\n')}\n`);
  }

  addRunnerSteps(doc, template, all, options.runner);

  const secrets = agentSecrets(options.presets);
  // The publish job runs no agent: it gets no model key.
  for (const step of story.filter((s) => s.phase !== 'publish')) {
    const env = step.node.get('env');
    const kept: Record<string, unknown> = {};
    if (isMap(env)) {
      for (const pair of env.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const value = isScalar(pair.value) ? String(pair.value.value) : '';
        if (!/\bsecrets\./.test(value)) kept[key] = value;
      }
    }
    for (const name of secrets) kept[name] = `\${{ secrets.${name} }}`;
    step.node.set('env', doc.createNode(kept));
  }
  return doc.toString({ lineWidth: 0 });
}

/** After setup-node of the story job: the toolchains the gates need; Node's own version file. */
function addRunnerSteps(
  doc: Document,
  template: string,
  all: readonly TemplateStep[],
  runner: Parameters<typeof adaptWorkflow>[2]['runner'],
): void {
  if (runner === undefined) return;
  const nodes = all.filter((s) => s.uses?.startsWith('actions/setup-node@') === true);
  if (nodes.length === 0) {
    throw new EpicflowError('internal', `template ${template} has no actions/setup-node step`);
  }
  // Each job that sets Node up runs setup and gates: each gets the toolchains.
  for (const node of nodes) {
    if (runner.nodeVersionFile !== undefined) {
      node.node.set('with', doc.createNode({ 'node-version-file': runner.nodeVersionFile }));
    }
    const at = node.list.items.indexOf(node.node) + 1;
    const created = runner.steps.map((r) => {
      const item = doc.createNode(r.step);
      const usesNode = item.get('uses', true);
      if (r.version !== undefined && isScalar(usesNode)) usesNode.comment = ` ${r.version}`;
      item.commentBefore = r.comment;
      item.spaceBefore = true;
      return item;
    });
    node.list.items.splice(at, 0, ...created);
  }
}

/** The Action's release tag for a package version: `v<major>`. */
export function releaseRef(version: string): string {
  const major = /^(\d+)\.\d+\.\d+/.exec(version)?.[1];
  if (major === undefined)
    throw new EpicflowError('internal', `package version "${version}" is not semantic`);
  return `v${major}`;
}

interface NextStepsInput {
  readonly mode: InitMode;
  readonly presets: readonly AgentPreset[];
  readonly label: string;
  /** What happened to the label on GitHub, when a token was given. */
  readonly labelOutcome?: { readonly repo: string; readonly action: 'created' | 'unchanged' };
}

/** What is left to do on GitHub, for people. */
export function nextSteps(input: NextStepsInput): string {
  const secrets = agentSecrets(input.presets);
  const width = Math.max(...secrets.map((s) => s.length));
  const lines = [
    '',
    'Next, on GitHub:',
    '  1. Add these repository secrets (Settings → Secrets and variables → Actions):',
  ];
  for (const s of secrets) {
    const users = input.presets.filter((p) => p.secret === s).map((p) => p.id);
    lines.push(`       ${s.padEnd(width)}  for ${users.join(', ')}`);
  }
  if (input.mode === 'app') {
    lines.push(
      '     and, so that story jobs act as the App (their pushes then start your CI), the',
      "     variable EPICFLOW_APP_CLIENT_ID (the App's client ID) and the secret",
      '     EPICFLOW_APP_PRIVATE_KEY (its private key).',
    );
  } else {
    lines.push(
      '     Optional: the variable EPICFLOW_APP_CLIENT_ID and the secret EPICFLOW_APP_PRIVATE_KEY',
      "     of a GitHub App, so that epicflow's pushes start your CI (GITHUB_TOKEN's do not).",
    );
  }
  if (input.labelOutcome === undefined) {
    lines.push(`  2. Create the label "${input.label}" (Issues → Labels → New label).`);
  } else {
    const done = input.labelOutcome.action === 'created' ? 'created' : 'already there';
    lines.push(`  2. The label "${input.label}" on ${input.labelOutcome.repo}: ${done}.`);
  }
  lines.push(
    '  3. Commit these files and push them to the default branch (workflows run from there).',
  );
  if (input.mode === 'app') {
    lines.push('  4. Install the epicflow App on the repository (docs/setup-app.md).');
  }
  lines.push(
    `  ${input.mode === 'app' ? 5 : 4}. Label an issue holding a plan "${input.label}".`,
    '',
  );
  return lines.join('\n');
}
