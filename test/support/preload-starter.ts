/**
 * Preloaded into the Action's bundle by the tests (`node --import <this, bundled> index.js`,
 * test/action/support/world.ts): the job's child processes (git, `sh`, the agents, the gates)
 * start from the tests' small helper process (process-starter.ts), as the workers' do, instead
 * of each being a fork of the job's Node process first. The bundle reads the starter when it
 * loads (`PRELOADED` in src/adapters/process/starter.ts). Built by the action project's
 * global setup next to `process-starter-child.py`, which the helper runs.
 */
import { startFromHelper } from './process-starter.js';

(globalThis as Record<symbol, unknown>)[Symbol.for('epicflow.startProcess')] = startFromHelper;
