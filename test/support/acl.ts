/**
 * The ACL entries a folder holds for single users (`user:<uid>:<perms>`, as `getfacl`
 * prints them numerically): what a passage would have set on it.
 */
import { execFileSync } from 'node:child_process';

export function userAclEntries(path: string): string[] {
  const acl = execFileSync('getfacl', ['--omit-header', '--numeric', '--absolute-names', path], {
    encoding: 'utf8',
  });
  return acl.split('\n').filter((l) => /^user:\d+:/.test(l));
}
