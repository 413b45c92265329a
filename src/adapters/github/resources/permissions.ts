/** Collaborators: who may steer an epic (write, maintain or admin on the repository). */
import { githubError, statusOf } from '../errors.js';
import { Resource } from './resource.js';

export type RepoPermission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

const ROLES: readonly RepoPermission[] = ['admin', 'maintain', 'write', 'triage', 'read', 'none'];

export class Permissions extends Resource {
  /** The user's role on this repository; `none` for unknown users and outsiders. */
  async permissionOf(login: string): Promise<RepoPermission> {
    try {
      const { data } = await this.octokit.rest.repos.getCollaboratorPermissionLevel({
        ...this.base,
        username: login,
      });
      // `role_name` is exact (maintain, triage); custom roles fall back to the legacy field.
      const role = ROLES.find((r) => r === data.role_name);
      return role ?? ROLES.find((r) => r === data.permission) ?? 'none';
    } catch (e) {
      if (statusOf(e) === 404) return 'none';
      throw githubError(`read the permission of ${login} on ${this.fullName}`, e, 'Metadata: read');
    }
  }

  /** Write, maintain or admin: who may start, resume or steer an epic. */
  async canWrite(login: string): Promise<boolean> {
    const p = await this.permissionOf(login);
    return p === 'write' || p === 'maintain' || p === 'admin';
  }
}
