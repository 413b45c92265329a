/**
 * What detection writes for a Python project installed with pip: a virtual environment in
 * the tree (setup and each gate run with homes of their own, and Debian's Python refuses
 * `pip install` outside one), the gates run with its interpreter, and the gate tools the
 * installed files do not list installed beside them.
 */
import { describe, expect, it } from '@jest/globals';
import { otherEcosystems } from '../../src/core/init/ecosystems.js';
import { detectionPaths } from '../../src/core/init/index.js';

function python(files: Record<string, string>) {
  const found = otherEcosystems(Object.keys(files).sort(), new Map(Object.entries(files)));
  const py = found[0];
  if (py === undefined) throw new Error('no Python found');
  return {
    setup: py.setup.map((s) => `${s.command}  # ${s.from}`),
    gates: py.gates.map((g) => g.command),
    warnings: py.warnings,
  };
}

const VENV =
  'python3 -m venv --without-pip --system-site-packages .venv && (.venv/bin/python -m pip --version 2>/dev/null || .venv/bin/python -m ensurepip) >/dev/null && .venv/bin/python -m pip install';

describe('a pip project', () => {
  it('requirements files: installed into the in-tree environment, the gates run with its python', () => {
    expect(
      python({
        'requirements.txt': 'requests==2.32.0\n',
        'requirements-dev.txt': 'pytest==8.3.0\nruff==0.6.0\n',
        'ruff.toml': '',
        'conftest.py': '',
      }),
    ).toEqual({
      setup: [
        `${VENV} -r requirements.txt -r requirements-dev.txt  # requirements.txt, requirements-dev.txt`,
      ],
      gates: ['.venv/bin/python -m pytest', '.venv/bin/python -m ruff check .'],
      warnings: [],
    });
  });

  it('a gate tool configured but not listed is installed by name; a plugin of it does not count as it', () => {
    const { setup } = python({
      'requirements.txt': 'pytest-cov==5.0\nmypy-extensions==1.0\n',
      'pytest.ini': '[pytest]\n',
      'mypy.ini': '[mypy]\n',
    });
    expect(setup).toEqual([`${VENV} -r requirements.txt pytest mypy  # requirements.txt`]);
  });

  it('a project without requirements files: the project itself, editable, with its test extra', () => {
    const { setup, gates, warnings } = python({
      'pyproject.toml': [
        '[project]',
        'name = "shop"',
        'dependencies = ["requests>=2"]',
        '',
        '[project.optional-dependencies]',
        'docs = ["sphinx"]',
        'test = [',
        '  "pytest>=8",',
        ']',
        '',
        '[tool.pytest.ini_options]',
        'testpaths = ["tests"]',
        '',
      ].join('\n'),
    });
    expect(setup).toEqual([
      `${VENV} -e '.[test]'  # pyproject.toml [project] dependencies, [project.optional-dependencies] test`,
    ]);
    expect(gates).toEqual(['.venv/bin/python -m pytest']);
    expect(warnings).toEqual([
      'pyproject.toml [project] dependencies: no lockfile (uv.lock, poetry.lock, pdm.lock) or requirements file pins the Python dependencies: setup installs whatever versions resolve today',
    ]);
  });

  it('setup.py without extras: the project and the test tool it does not list', () => {
    expect(
      python({ 'setup.py': 'from setuptools import setup\nsetup()\n', 'conftest.py': '' }).setup,
    ).toEqual([`${VENV} -e . pytest  # setup.py`]);
  });

  it('nothing of the project to install: no setup, the gates run with the system python', () => {
    expect(
      python({ 'pyproject.toml': '[project]\nname = "shop"\n\n[tool.pytest.ini_options]\n' }),
    ).toMatchObject({ setup: [], gates: ['python3 -m pytest'] });
  });

  it('poetry and hatch keep their environment in the tree; uv and pdm do so by themselves', () => {
    expect(
      python({
        'pyproject.toml': '[tool.poetry]\nname = "shop"\n',
        'poetry.lock': '',
        'pytest.ini': '',
      }),
    ).toMatchObject({
      setup: ['POETRY_VIRTUALENVS_IN_PROJECT=true poetry install  # poetry.lock'],
      gates: ['POETRY_VIRTUALENVS_IN_PROJECT=true poetry run pytest'],
    });
    expect(python({ 'hatch.toml': '', 'pyproject.toml': '', 'pytest.ini': '' })).toMatchObject({
      setup: ['HATCH_ENV_TYPE_VIRTUAL_PATH=.venv hatch env create  # hatch.toml'],
      gates: ['HATCH_ENV_TYPE_VIRTUAL_PATH=.venv hatch run pytest'],
    });
    expect(python({ 'pyproject.toml': '', 'uv.lock': '', 'pytest.ini': '' })).toMatchObject({
      setup: ['uv sync --locked  # uv.lock'],
      gates: ['uv run pytest'],
    });
  });

  it('hatch: the environment that installs pytest, created by setup and named by each gate', () => {
    // pytest-dev/iniconfig's layout: a test environment beside the default one.
    const iniconfig = [
      '[tool.hatch.version]',
      'source = "vcs"',
      '',
      '[tool.hatch.envs.lint]',
      'dependencies = ["ruff"]',
      '[tool.hatch.envs.test]',
      'dependencies = [',
      '  "pytest"',
      ']',
      '[tool.hatch.envs.test.scripts]',
      'default = "pytest {args}"',
      '',
      '[tool.mypy]',
      'strict = true',
      '[tool.pytest.ini_options]',
      'testpaths = ["testing"]',
      '',
    ].join('\n');
    expect(python({ 'pyproject.toml': iniconfig })).toEqual({
      setup: [
        'HATCH_ENV_TYPE_VIRTUAL_PATH=.venv hatch env create test  # pyproject.toml [tool.hatch.envs], environment test installs pytest',
      ],
      gates: [
        'HATCH_ENV_TYPE_VIRTUAL_PATH=.venv hatch run test:pytest',
        'HATCH_ENV_TYPE_VIRTUAL_PATH=.venv hatch run test:mypy .',
      ],
      warnings: [
        'hatch keeps no lockfile: setup "hatch env create test" installs whatever versions resolve today; pin them in the environment\'s dependencies to keep them',
      ],
    });
    // In hatch.toml, several: the name a test run wants first; the default one needs no name.
    expect(
      python({
        'pyproject.toml': '',
        'hatch.toml':
          '[envs.ci]\ndependencies = ["pytest"]\n[envs.tests]\ndependencies = ["pytest-cov", "pytest>=8"]\n',
        'pytest.ini': '',
      }).gates,
    ).toEqual(['HATCH_ENV_TYPE_VIRTUAL_PATH=.venv hatch run tests:pytest']);
    expect(
      python({
        'pyproject.toml':
          '[tool.hatch.envs.default]\ndependencies = ["pytest"]\n[tool.hatch.envs.docs]\ndependencies = ["pytest-mkdocs"]\n',
        'pytest.ini': '',
      }),
    ).toMatchObject({
      setup: [
        'HATCH_ENV_TYPE_VIRTUAL_PATH=.venv hatch env create  # pyproject.toml [tool.hatch.envs]',
      ],
      gates: ['HATCH_ENV_TYPE_VIRTUAL_PATH=.venv hatch run pytest'],
    });
  });

  it('test modules under tests/ with nothing configured: pytest runs them (unittest ones too), installed by name', () => {
    expect(
      python({
        'requirements.txt': 'nltk==3.9.2\n',
        'tests/test_stopwords.py': 'import unittest\n',
      }),
    ).toMatchObject({
      setup: [`${VENV} -r requirements.txt pytest  # requirements.txt`],
      gates: ['.venv/bin/python -m pytest'],
      warnings: [],
    });
    // A module that is not a test module, or one outside tests/, is no reason.
    expect(
      python({ 'requirements.txt': '', 'tests/helpers.py': '', 'src/test_x.py': '' }),
    ).toMatchObject({ gates: [] });
  });
});

describe('detectionPaths', () => {
  const repo = [
    'README.md',
    'pyproject.toml',
    'requirements.txt',
    'src/shop/price.py',
    'test/unit/price_test.py',
    'tests/test_price.py',
    'services/kit/pyproject.toml',
    'services/kit/tests/test_kit.py',
  ];
  it("a folder's own detection files and its Python test files, relative to it", () => {
    expect(detectionPaths(repo)).toEqual([
      'pyproject.toml',
      'requirements.txt',
      'test/unit/price_test.py',
      'tests/test_price.py',
    ]);
    expect(detectionPaths(repo, 'services/kit')).toEqual(['pyproject.toml', 'tests/test_kit.py']);
  });
});
