// Reading the API server's audit log across rotations.
//
// kube-apiserver writes its audit log through a rotating writer: when the file reaches
// --audit-log-maxsize (100 MB when unset, the harness's case) it is renamed to
// `audit-<time>.log` beside it and a new `audit.log` begins. A reader that remembers a byte offset
// in `audit.log` and reads from there later loses everything written before a rotation in between,
// and sees a namespace's history start in the middle. The safety checker then judges a step
// without the pod readiness or revisions that came before it. A 30-minute soak read that way
// reported 19 "violations", all in the first five seconds of the history it was given.
//
// A mark is where the log was at a moment: the current file (by inode: a rotation renames it, and a
// rename keeps the inode) and its size. Reading since a mark takes that file from the offset and every
// file rotated after it, and the current file, in order. (A first version chose the backups by their
// modification time, which loses a rotation whose old file was last written before the mark: the
// offset was then applied to the new file.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/** AuditMark is a position in the audit log: when it was taken, the current file's inode and size then. */
export interface AuditMark {
  at: number;
  offset: number;
  /** The current file's inode at the mark; 0 when there was no log yet. */
  ino: number;
}

/** The start of the log: every backup and the whole current file. */
export const LOG_START: AuditMark = { at: 0, offset: 0, ino: 0 };

/** auditMark is the audit log's position now. */
export function auditMark(file: string, now = Date.now()): AuditMark {
  try {
    const st = statSync(file);
    return { at: now, offset: st.size, ino: st.ino };
  } catch {
    // no log yet: everything written from now on is after the mark
    return { at: now, offset: 0, ino: 0 };
  }
}

/**
 * auditFiles lists the files that hold what was written since `mark`, oldest first, each with the
 * byte offset to start reading at. Backups are named by their rotation time, so the name orders
 * them, and the current file is last. The mark's file (found by inode) starts at the mark's offset and
 * older files are skipped. Should the mark's file be gone (a backup pruned), or the mark be LOG_START,
 * every file whose last write is at or after the mark is read whole.
 */
export function auditFiles(file: string, mark: AuditMark): { path: string; offset: number }[] {
  const dir = dirname(file);
  const ext = extname(file);
  const prefix = `${basename(file, ext)}-`;
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const ordered = [
    ...names
      .filter((n) => n.startsWith(prefix) && n.endsWith(ext))
      .sort()
      .map((n) => join(dir, n)),
    file,
  ];
  const files: { path: string; ino: number; mtimeMs: number }[] = [];
  for (const path of ordered) {
    try {
      const st = statSync(path);
      files.push({ path, ino: st.ino, mtimeMs: st.mtimeMs });
    } catch {
      // rotated away or not written yet
    }
  }
  const at = mark.ino === 0 ? -1 : files.findIndex((f) => f.ino === mark.ino);
  if (at >= 0) return files.slice(at).map((f, i) => ({ path: f.path, offset: i === 0 ? mark.offset : 0 }));
  return files.filter((f) => f.path === file || f.mtimeMs >= mark.at).map((f) => ({ path: f.path, offset: 0 }));
}

/** readAudit returns the parsed lines written since `mark` that `keep` accepts (a cheap text test). */
export function readAudit<T>(file: string, mark: AuditMark, keep: (line: string) => boolean): T[] {
  const out: T[] = [];
  for (const { path, offset } of auditFiles(file, mark)) {
    const bytes = readFileSync(path);
    // Offsets are bytes: slicing the decoded string would drift on any multi-byte character.
    const text = bytes.subarray(Math.min(offset, bytes.length)).toString('utf8');
    for (const line of text.split('\n')) if (line.startsWith('{') && keep(line)) out.push(JSON.parse(line) as T);
  }
  return out;
}

/** inNamespace is the usual `keep`: the events about objects of one namespace. */
export const inNamespace = (ns: string) => (line: string) => line.includes(`"namespace":"${ns}"`);
