// What a restore from a checkpoint cost the single member, from the writer's records and the rows read
// back at the end: the acknowledged writes missing, split at the checkpoint's cut. A write acknowledged
// before the cut was committed before the CSI driver froze the filesystem, so it is in the snapshot and
// must be there at the end; one acknowledged after it is gone if the member was restored. Pure: rows in
// checkpoint-loss.test.ts.
import type { WriteRecord } from '../etcd/results.js';

/** Cut is the line the loss is split at: the checkpoint's cut, or with none, when the member's pod began to go. */
export interface Cut {
  atMs: number;
  what: 'checkpoint' | 'pod-deleted' | 'none';
}

/** Snapshot is one checkpoint of the member: its VolumeSnapshot's name and its content's cut (ms). */
export interface Snapshot {
  name: string;
  cutMs?: number;
}

/**
 * cutMsOf reads a VolumeSnapshotContent's cut: `status.creationTime` is nanoseconds since the epoch
 * (the VolumeSnapshot's own is a date in whole seconds, too coarse at 20 writes a second).
 */
export function cutMsOf(content: { status?: { creationTime?: number | string } } | undefined): number | undefined {
  const ns = Number(content?.status?.creationTime);
  return Number.isFinite(ns) && ns > 0 ? Math.floor(ns / 1e6) : undefined;
}

/**
 * chooseCut is the line: the checkpoint the restored claim was made from (`restoredFrom`), else the
 * newest cut one; with none, the moment the member's pod was first seen going (`podGoneMs`): a
 * checkpoint is cut before that, so nothing acknowledged before it may be lost by a restore.
 */
export function chooseCut(snapshots: readonly Snapshot[], restoredFrom: string | undefined, podGoneMs: number | undefined): Cut {
  const cut = snapshots.filter((s) => s.cutMs !== undefined);
  const from = restoredFrom !== undefined ? cut.find((s) => s.name === restoredFrom) : undefined;
  const newest = [...cut].sort((a, b) => (b.cutMs as number) - (a.cutMs as number))[0];
  const s = from ?? newest;
  if (s) return { atMs: s.cutMs as number, what: 'checkpoint' };
  return podGoneMs !== undefined ? { atMs: podGoneMs, what: 'pod-deleted' } : { atMs: Infinity, what: 'none' };
}

/** Loss is how many acknowledged writes are missing at the end, before and after the cut. */
export interface Loss {
  beforeCut: number;
  afterCut: number;
}

/** lossAround splits the acknowledged writes missing from `stored` (null: the table is gone) at `cutMs`. */
export function lossAround(records: readonly WriteRecord[], stored: ReadonlyMap<string, string> | null, cutMs: number): Loss {
  const out: Loss = { beforeCut: 0, afterCut: 0 };
  for (const r of records) {
    if (r.ackAt === undefined || stored?.get(r.key) === r.value) continue;
    if (r.ackAt < cutMs) out.beforeCut++;
    else out.afterCut++;
  }
  return out;
}

/** End is what the member looked like when the writer stopped. */
export interface End {
  ready: boolean;
  tableBack: boolean;
  /** When the writer was told to stop: the writes of the last `windowMs` before it are judged. */
  stopMs: number;
  windowMs: number;
}

/**
 * healthyAtEnd: the member is Ready, the table is there, and the application writes again: every write
 * sent in the last window before the writer stopped was acknowledged (and there was one).
 */
export function healthyAtEnd(records: readonly WriteRecord[], e: End): boolean {
  const last = records.filter((r) => r.sentAt >= e.stopMs - e.windowMs && r.sentAt < e.stopMs);
  return e.ready && e.tableBack && last.length > 0 && last.every((r) => r.ackAt !== undefined);
}
