/**
 * The steps the story workflow needs before the story runs, so the gates find on the
 * runner what detection found in the repository: Python (and uv, poetry, pdm or hatch),
 * Go, Rust, the Node version the repository names and the package manager it installs
 * with where a runner has none (pnpm, Yarn 2 and later, bun). Actions are pinned to release
 * commits, the version in a comment, as the templates pin theirs.
 */
import type { Toolchain } from './ecosystems.js';

/** An action at a release commit. */
interface Pin {
  readonly uses: string;
  readonly version: string;
}

const SETUP_PYTHON: Pin = {
  uses: 'actions/setup-python@ece7cb06caefa5fff74198d8649806c4678c61a1',
  version: 'v6.3.0',
};
const SETUP_UV: Pin = {
  uses: 'astral-sh/setup-uv@11f9893b081a58869d3b5fccaea48c9e9e46f990',
  version: 'v8.3.2',
};
const SETUP_BUN: Pin = {
  uses: 'oven-sh/setup-bun@0c5077e51419868618aeaa5fe8019c62421857d6',
  version: 'v2.2.0',
};
const SETUP_GO: Pin = {
  uses: 'actions/setup-go@924ae3a1cded613372ab5595356fb5720e22ba16',
  version: 'v6.5.0',
};

/** One step, the comment above it, and the version of its pinned action. */
export interface RunnerStep {
  readonly comment: string;
  readonly step: Readonly<Record<string, unknown>>;
  /** The release of `step.uses`, written as its line's comment. */
  readonly version?: string;
}

function uses(pin: Pin, comment: string, withs?: Record<string, string>): RunnerStep {
  return {
    comment,
    step: { uses: pin.uses, ...(withs === undefined ? {} : { with: withs }) },
    version: pin.version,
  };
}

/** The steps for these toolchains, in the order they must run. */
export function runnerSteps(
  toolchains: readonly Toolchain[],
  texts: ReadonlyMap<string, string>,
): RunnerStep[] {
  const has = (t: Toolchain): boolean => toolchains.includes(t);
  const steps: RunnerStep[] = [];
  if (has('python')) {
    const file = texts.has('.python-version')
      ? '.python-version'
      : /^\s*requires-python\s*=/m.test(texts.get('pyproject.toml') ?? '')
        ? 'pyproject.toml'
        : undefined;
    steps.push(
      file === undefined
        ? uses(SETUP_PYTHON, ' Python for the gates (no .python-version: the newest 3.x)', {
            'python-version': '3.x',
          })
        : uses(SETUP_PYTHON, ` Python for the gates, the version ${file} names`, {
            'python-version-file': file,
          }),
    );
  }
  if (has('uv')) steps.push(uses(SETUP_UV, ' uv: setup and gates run through it'));
  for (const tool of ['poetry', 'pdm', 'hatch'] as const) {
    if (has(tool)) {
      steps.push({
        comment: ` ${tool}: setup and gates run through it`,
        step: { name: `Install ${tool}`, run: `pipx install ${tool}` },
      });
    }
  }
  if (has('go')) {
    // The root's go.mod, else its go.work; only packages' modules: the newest stable Go.
    const file = ['go.mod', 'go.work'].find((f) => texts.has(f));
    steps.push(
      file === undefined
        ? uses(
            SETUP_GO,
            ' Go for the gates (no go.mod or go.work at the root: the newest stable)',
            {
              'go-version': 'stable',
            },
          )
        : uses(SETUP_GO, ` Go for the gates, the version ${file} names`, {
            'go-version-file': file,
          }),
    );
  }
  for (const tool of ['pnpm', 'yarn'] as const) {
    if (has(tool)) {
      // Node 25 and later no longer bring corepack: it is installed first.
      steps.push({
        comment: ` ${tool}: setup and gates run through it (corepack: the version package.json's packageManager names)`,
        step: { name: `Set up ${tool}`, run: `npm install -g corepack && corepack enable ${tool}` },
      });
    }
  }
  if (has('bun')) {
    // Without a .bun-version, setup-bun reads package.json's packageManager, else the newest.
    steps.push(
      texts.has('.bun-version')
        ? uses(SETUP_BUN, ' bun: setup and gates run through it, the version .bun-version names', {
            'bun-version-file': '.bun-version',
          })
        : uses(SETUP_BUN, " bun: setup and gates run through it (package.json's packageManager)"),
    );
  }
  if (has('rust')) {
    steps.push({
      comment: ' Rust for the gates (rust-toolchain.toml, when there is one, picks the version)',
      step: {
        name: 'Set up Rust',
        run: 'rustup toolchain install stable --profile minimal --component clippy',
      },
    });
  }
  return steps;
}

/** The file naming the repository's Node version, for setup-node's `node-version-file`. */
export function nodeVersionFile(paths: readonly string[]): string | undefined {
  return ['.nvmrc', '.node-version'].find((f) => paths.includes(f));
}
