/**
 * `npm run bench [-- NAME...]`: runs every registered benchmark, or those
 * whose name contains one of the given words. Each benchmark is a module with
 * `run(): Promise<void>` that prints its own table; add one by adding a line.
 */
interface Benchmark {
  readonly run: () => Promise<void>;
}

const benchmarks: Readonly<Record<string, () => Promise<Benchmark>>> = {
  scheduling: () => import('./scheduling.js'),
  'github-double': () => import('./github-double.js'),
  'engine-overhead': () => import('./engine-overhead.js'),
  app: () => import('./app.js'),
  action: () => import('./action.js'),
  scale: () => import('./scale.js'),
  'starting-code': () => import('./starting-code.js'),
  'step-repository': () => import('./step-repository.js'),
};

async function main(filters: readonly string[]): Promise<number> {
  const names = Object.keys(benchmarks).filter(
    (name) => filters.length === 0 || filters.some((f) => name.includes(f)),
  );
  if (names.length === 0) {
    console.error(
      `no benchmark matches ${filters.join(', ')}; known: ${Object.keys(benchmarks).join(', ')}`,
    );
    return 2;
  }
  for (const name of names) {
    const load = benchmarks[name];
    if (load === undefined) continue;
    console.log(`\n## ${name}\n`);
    await (await load()).run();
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
