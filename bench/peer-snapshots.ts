// Where the peer systems' source snapshots are (sts-phased-rollout-operator and grafana/rollout-operator,
// as `git archive` tarballs) and whether they are all there. They are not part of this repository: a
// clone alone has none, and then bench:peers, bench:matrix and their e2e smoke runs say so instead of
// failing somewhere inside a build. Pure but for reading one directory.
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';

/** PEER_ARCHIVES are the archive name prefixes hack/peers-build.sh builds from. */
export const PEER_ARCHIVES = ['sts-phased-rollout-operator-', 'rollout-operator-'] as const;

/** HOW_TO_GET says where snapshots come from and how to point at them. */
export const HOW_TO_GET =
  'put sts-phased-rollout-operator-<commit>.tar.gz and rollout-operator-<commit>.tar.gz (git archive of each project) there, or name a folder that has them with --peers DIR or PHASED_ROLLOUT_PEERS';

/** peerSnapshotsDir is the folder to look in: a flag, then PHASED_ROLLOUT_PEERS, then ../shared/peers beside the repository. */
export function peerSnapshotsDir(root: string, flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag ?? env.PHASED_ROLLOUT_PEERS ?? resolve(root, '..', 'shared', 'peers'));
}

/** missingPeerSnapshots says in one line what is missing from `dir`, or undefined when every archive is there. */
export function missingPeerSnapshots(dir: string): string | undefined {
  if (!existsSync(dir)) return `no peer snapshots: ${dir} does not exist; ${HOW_TO_GET}`;
  const names = readdirSync(dir);
  const missing = PEER_ARCHIVES.filter((p) => !names.some((n) => n.startsWith(p) && n.endsWith('.tar.gz') && (p !== 'rollout-operator-' || !n.startsWith('sts-'))));
  return missing.length > 0 ? `no peer snapshot ${missing.map((m) => `${m}*.tar.gz`).join(' or ')} in ${dir}; ${HOW_TO_GET}` : undefined;
}
