/**
 * Collaborators: a user's role on the repository. Who may steer an epic with it is
 * the core's decision (`decideSender`, core/epic/sender.ts).
 */
import type { Permission } from '../../../core/epic/sender.js';
import { githubError, statusOf } from '../errors.js';
import { Resource } from './resource.js';

const ROLES: readonly Permission[] = ['admin', 'maintain', 'write', 'triage', 'read', 'none'];

export class Permissions extends Resource {
  /** The user's role on this repository; `none` for unknown users and outsiders. */
  async permissionOf(login: string): Promise<Permission> {
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
}
