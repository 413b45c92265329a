/** The double's route table: `METHOD /openapi/path/{template}` → handler. Add endpoints here. */
import type { RouteTable } from '../context.js';
import { actionRoutes } from './actions.js';
import { checkRoutes } from './checks.js';
import { gitRoutes } from './git.js';
import { issueRoutes } from './issues.js';
import { pullRoutes } from './pulls.js';
import { repoRoutes } from './repos.js';
import { reviewRoutes } from './reviews.js';

export const routes: RouteTable = {
  ...repoRoutes,
  ...issueRoutes,
  ...pullRoutes,
  ...reviewRoutes,
  ...gitRoutes,
  ...actionRoutes,
  ...checkRoutes,
};
