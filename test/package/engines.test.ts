/**
 * The Node versions epicflow declares it runs on (`engines.node`) must be ones every
 * production dependency in the lockfile runs on too: a dependency that moved to a newer
 * Node (content-type 3 wants Node 22) would otherwise break `npm ci --engine-strict` and
 * installs on Node 20 without anything in the suite noticing.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import semver from 'semver';

interface LockEntry {
  version?: string;
  dev?: boolean;
  engines?: { node?: string } | string[];
}

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, LockEntry>;
};

describe('engines', () => {
  it('admits Node 20 (this suite) and Node 24 (the Action runtime)', () => {
    expect(semver.satisfies(process.versions.node, pkg.engines.node)).toBe(true);
    expect(semver.satisfies('24.0.0', pkg.engines.node)).toBe(true);
  });

  it('declares no Node version a production dependency refuses', () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.dev !== true)
      .flatMap(([path, entry]) => {
        const wants = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return wants && !semver.subset(pkg.engines.node, wants)
          ? [`${path}@${entry.version ?? '?'} wants node ${wants}`]
          : [];
      });
    expect(refusing).toEqual([]);
  });
});
