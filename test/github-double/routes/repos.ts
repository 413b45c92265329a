/** Repositories, users, the app, installations and tokens, collaborator permission. */
import { randomBytes } from 'node:crypto';
import { HttpError, param, type RestContext, type RouteTable } from '../context.js';
import type { Double } from '../double.js';
import { legacyPermission } from '../fixtures.js';

function requireApp(ctx: RestContext) {
  const app = ctx.double.state.app;
  if (ctx.auth !== 'app-jwt' || !app) {
    throw new HttpError(401, 'A JSON web token could not be decoded');
  }
  return app;
}

export const repoRoutes: RouteTable = {
  'GET /repos/{owner}/{repo}': (ctx) => {
    const repo = ctx.double.repo(param(ctx, 'owner'), param(ctx, 'repo'));
    if (ctx.double.permissionOf(repo, ctx.actor) === 'none') throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.double.repoJson(repo, ctx.actor) };
  },
  'GET /user': (ctx) => {
    if (!ctx.actor) throw new HttpError(401, 'Requires authentication');
    if (ctx.actor.type === 'Bot') {
      throw new HttpError(403, 'Resource not accessible by integration');
    }
    return { status: 200, body: ctx.double.fixtures.privateUser(ctx.actor) };
  },
  'GET /repos/{owner}/{repo}/collaborators/{username}/permission': (ctx) => {
    const repo = ctx.double.repo(param(ctx, 'owner'), param(ctx, 'repo'));
    if (!ctx.actor) throw new HttpError(401, 'Requires authentication');
    const login = param(ctx, 'username');
    const user = ctx.double.state.users.get(login.toLowerCase());
    if (!user) throw new HttpError(404, `${login} is not a user`);
    const p = ctx.double.permissionOf(repo, user);
    return {
      status: 200,
      body: {
        permission: legacyPermission(p),
        role_name: p,
        user: {
          ...ctx.double.fixtures.user(user),
          permissions: {
            admin: p === 'admin',
            maintain: p === 'maintain' || p === 'admin',
            push: ['write', 'maintain', 'admin'].includes(p),
            triage: p !== 'read' && p !== 'none',
            pull: p !== 'none',
          },
          role_name: p,
        },
      },
    };
  },
  'GET /app': (ctx) => {
    const app = requireApp(ctx);
    return { status: 200, body: ctx.double.fixtures.app(app, ctx.double.user('double-app-owner')) };
  },
  'GET /repos/{owner}/{repo}/installation': (ctx) => {
    const app = requireApp(ctx);
    const repo = ctx.double.repo(param(ctx, 'owner'), param(ctx, 'repo'));
    const inst = ctx.double.installationFor(repo.owner);
    return {
      status: 200,
      body: ctx.double.fixtures.installation(app, inst.id, ctx.double.user(repo.owner)),
    };
  },
  'GET /app/installations/{installation_id}': (ctx) => {
    const app = requireApp(ctx);
    const id = Number(param(ctx, 'installation_id'));
    const inst = [...ctx.double.state.installations.values()].find((i) => i.id === id);
    if (!inst) throw new HttpError(404, 'Not Found');
    return {
      status: 200,
      body: ctx.double.fixtures.installation(app, inst.id, ctx.double.user(inst.account)),
    };
  },
  'POST /app/installations/{installation_id}/access_tokens': (ctx) => {
    requireApp(ctx);
    const id = Number(param(ctx, 'installation_id'));
    const inst = [...ctx.double.state.installations.values()].find((i) => i.id === id);
    if (!inst) throw new HttpError(404, 'Not Found');
    const { token, expiresAt } = mintInstallationToken(ctx.double, inst.id);
    // GitHub's form (whole seconds) never says later than the token really expires.
    const expires = new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return {
      status: 201,
      body: {
        token,
        expires_at: expires,
        permissions: {
          issues: 'write',
          pull_requests: 'write',
          contents: 'write',
          actions: 'write',
          metadata: 'read',
          organization_projects: 'write',
        },
        repository_selection: 'all',
      },
    };
  },
};

/**
 * An installation token (`ghs_…`) acting as the App's bot, counted against the installation,
 * expiring as the App's tokens do (real time: tokens are not on the limits' clock).
 */
export function mintInstallationToken(
  double: Double,
  installationId: number,
): { token: string; expiresAt: number } {
  const app = double.state.app;
  if (!app) throw new Error('github-double: seed the app first');
  const token = `ghs_${randomBytes(18).toString('hex')}`;
  double.state.tokens.set(token, app.bot);
  const expiresAt = Date.now() + (app.tokenLifetimeMs ?? 3600_000);
  double.state.tokenExpiry.set(token, expiresAt);
  double.state.tokenKinds.set(token, { kind: 'installation', installationId });
  return { token, expiresAt };
}
