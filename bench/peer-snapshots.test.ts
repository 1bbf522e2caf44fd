import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { missingPeerSnapshots, peerSnapshotsDir } from './peer-snapshots.js';

describe('peer snapshots', () => {
  it('are looked for in --peers, then PHASED_ROLLOUT_PEERS, then ../shared/peers', () => {
    expect(peerSnapshotsDir('/src/repo', '/x', { PHASED_ROLLOUT_PEERS: '/y' })).toBe('/x');
    expect(peerSnapshotsDir('/src/repo', undefined, { PHASED_ROLLOUT_PEERS: '/y' })).toBe('/y');
    expect(peerSnapshotsDir('/src/repo', undefined, {})).toBe(resolve('/src/shared/peers'));
  });

  it('say in one line what is missing and how to get it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'peers-'));
    expect(missingPeerSnapshots(join(dir, 'nowhere'))).toMatch(/^no peer snapshots: .*nowhere does not exist; put sts-phased-rollout-operator-<commit>\.tar\.gz .* --peers DIR or PHASED_ROLLOUT_PEERS$/);
    mkdirSync(join(dir, 'some'));
    writeFileSync(join(dir, 'some', 'sts-phased-rollout-operator-5006c0c.tar.gz'), '');
    // The sts-phased archive does not count as rollout-operator's.
    expect(missingPeerSnapshots(join(dir, 'some'))).toMatch(/^no peer snapshot rollout-operator-\*\.tar\.gz in /);
    writeFileSync(join(dir, 'some', 'rollout-operator-d8840495.tar.gz'), '');
    expect(missingPeerSnapshots(join(dir, 'some'))).toBeUndefined();
    expect(missingPeerSnapshots(join(dir, 'some')) ?? '').not.toContain('\n');
  });
});
