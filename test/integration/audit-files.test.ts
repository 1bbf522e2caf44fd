// Reading the audit log across rotations (test/support/audit-files.ts): what was written after a
// mark is read whole, whatever the rotations in between, and nothing from before it.
import { appendFileSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditFiles, auditMark, inNamespace, LOG_START, readAudit } from '../support/audit-files.js';

let dir: string;
let log: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'audit-files-'));
  log = join(dir, 'audit.log');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const line = (n: number, ns = 'a', note = '') => `${JSON.stringify({ n, note, objectRef: { namespace: ns } })}\n`;
const write = (...ns: number[]) => appendFileSync(log, ns.map((n) => line(n)).join(''));
/** rotate renames the current file as kube-apiserver's writer does, its last write at `atMs`. */
const rotate = (name: string, atMs: number) => {
  const backup = join(dir, `audit-${name}.log`);
  renameSync(log, backup);
  utimesSync(backup, atMs / 1000, atMs / 1000);
  writeFileSync(log, '');
};
const numbers = (mark = LOG_START, keep = (_: string) => true) => readAudit<{ n: number }>(log, mark, keep).map((e) => e.n);

describe('readAudit', () => {
  it('reads the current file from the mark when nothing rotated', () => {
    write(1, 2);
    const mark = auditMark(log);
    write(3, 4);
    expect(numbers(mark)).toEqual([3, 4]);
  });

  it('keeps what was written before a rotation after the mark (the soak lost this)', () => {
    write(1, 2);
    const mark = auditMark(log, 1_000_000);
    write(3, 4);
    rotate('2026-11-24T18-28-34.021', 2_000_000);
    write(5);
    expect(numbers(mark)).toEqual([3, 4, 5]);
  });

  it('follows several rotations in name order and skips backups older than the mark', () => {
    write(0);
    rotate('2026-11-24T10-00-00.000', 500_000); // before the mark
    write(1);
    const mark = auditMark(log, 1_000_000);
    write(2);
    rotate('2026-11-24T11-00-00.000', 2_000_000);
    write(3);
    rotate('2026-11-24T12-00-00.000', 3_000_000);
    write(4);
    expect(auditFiles(log, mark).map((f) => f.offset)).toEqual([line(1).length, 0, 0]);
    expect(numbers(mark)).toEqual([2, 3, 4]);
    expect(numbers()).toEqual([0, 1, 2, 3, 4]);
  });

  it('a rotation whose old file was last written before the mark: the new file is read whole', () => {
    write(1, 2);
    const mark = auditMark(log, 1_000_000);
    // The write that overflows the file goes to the new one: the backup's last write precedes the mark.
    rotate('2026-11-24T13-00-00.000', 900_000);
    write(3, 4);
    expect(auditFiles(log, mark).map((f) => f.offset)).toEqual([line(1).length + line(2).length, 0]);
    expect(numbers(mark)).toEqual([3, 4]);
  });

  it('a pruned mark file: every file written since the mark is read whole', () => {
    write(1);
    const mark = auditMark(log, 1_000_000);
    write(2);
    rotate('2026-11-24T14-00-00.000', 2_000_000);
    rmSync(join(dir, 'audit-2026-11-24T14-00-00.000.log'));
    write(3);
    expect(numbers(mark)).toEqual([3]);
  });

  it('counts the offset in bytes, not characters', () => {
    appendFileSync(log, line(1, 'a', 'zoné ünïcode ✓'));
    const mark = auditMark(log);
    write(2);
    expect(numbers(mark)).toEqual([2]);
  });

  it('keeps only the lines the filter accepts, and a missing log reads as empty', () => {
    appendFileSync(log, line(1, 'a') + line(2, 'b') + line(3, 'a'));
    expect(numbers(LOG_START, inNamespace('a'))).toEqual([1, 3]);
    rmSync(log);
    expect(numbers()).toEqual([]);
    expect(auditMark(log).offset).toBe(0);
  });
});
