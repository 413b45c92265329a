/**
 * jest `setupFilesAfterEnv`: epicflow's child processes in this test file start from a
 * small helper process (process-starter.ts), not from the large jest worker.
 * `EPICFLOW_TEST_STARTER=worker` starts them from the worker, as before (to compare).
 */
import { startProcessesWith } from '../../src/adapters/process/starter.js';
import { startFromHelper } from './process-starter.js';

if (process.env['EPICFLOW_TEST_STARTER'] !== 'worker') startProcessesWith(startFromHelper);
