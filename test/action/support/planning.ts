/** The planning tests' configuration: the scripted coder and the scripted planner (planner.mjs). */
import { agentScript } from './agents.js';
import { CODER } from './world.js';

export const PLANNER = agentScript('planner.mjs');

/** An epic in prose: the planner drafts `cart`, then `pay`. */
export const PROSE = [
  '# Checkout',
  '',
  'Customers put products into a cart (`src/cart`) and pay for it (`src/pay`). Paying needs the cart.',
  '',
].join('\n');

export function planningConfig(dumps: string): string {
  return [
    'executors:',
    '  - id: scripted',
    '    harness: command',
    `    command: ${JSON.stringify(['node', CODER, dumps])}`,
    '    slots: 4',
    '  - id: planner',
    '    harness: command',
    `    command: ${JSON.stringify(['node', PLANNER, dumps])}`,
    '    roles: [planner]',
    'gates: ["sh check.sh"]',
    'fixRounds: 0',
    '',
  ].join('\n');
}
