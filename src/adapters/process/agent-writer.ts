/**
 * Where epicflow is root and every step runs in the kernel sandbox as the one agent user:
 * the tools that make a step's mount namespace (`throughPassage`), and the trees epicflow
 * makes for steps written as that user (`TreeWriter`: git, run as it through such a
 * namespace, checks the commit out), so a fresh tree needs no giving file by file. No
 * process of the user runs outside a step's namespaces, where it could reach the tree or
 * the index while git writes them.
 */
import { randomUUID } from 'node:crypto';
import { lchown, lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { passage, throughPassage, type NamespaceTools } from '../../core/sandbox.js';
import type { TreeWriter } from '../git/tree-writer.js';
import { canonical } from './agent-folders.js';
import { onPath, type AgentAccount } from './agent-user.js';
import { closedAbove } from './sandbox.js';

/** Whether root can start a step through a mount namespace here (`throughPassage`'s tools). */
export async function namespaceTools(
  env: Readonly<Record<string, string>>,
): Promise<NamespaceTools | undefined> {
  const path = `${env['PATH'] ?? ''}:/usr/bin:/bin:/usr/sbin:/sbin`;
  const [unshare, setpriv, mount] = await Promise.all(
    ['unshare', 'setpriv', 'mount'].map((t) => onPath(t, path)),
  );
  if (unshare == null || setpriv == null || mount == null) return undefined;
  if ((await lstat('/bin/bash').catch(() => null)) === null) return undefined;
  return { unshare, setpriv, mount };
}

/** Trees written as `account`, its scratch folders under `homes` (removed by `discard`). */
export function agentTreeWriter(
  account: AgentAccount,
  tools: NamespaceTools,
  homes: string,
  discard: (folders: readonly string[]) => Promise<void>,
): TreeWriter {
  return {
    uid: account.uid,
    gid: account.gid,
    scratch: async (reach) => {
      const own = join(homes, `${account.user}.${randomUUID()}`);
      const dir = join(own, 'scratch');
      await mkdir(own, { mode: 0o711 });
      await mkdir(dir, { mode: 0o700 });
      await lchown(dir, account.uid, account.gid);
      const folders = await Promise.all([...reach, dir].map((f) => canonical(f)));
      const way = passage(
        await closedAbove(folders, account),
        folders.map((path) => ({ path, folder: true })),
      );
      return {
        dir,
        through: (argv) => throughPassage(account, way, argv, tools),
        done: () => discard([own]),
      };
    },
  };
}
