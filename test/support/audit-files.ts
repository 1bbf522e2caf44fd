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
// A mark is where the log was at a moment (wall clock and the current file's size); reading since
// a mark takes the file that was current then from the offset, every backup rotated after it, and
// the current file, in order.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/** AuditMark is a position in the audit log: when it was taken and the current file's size then. */
export interface AuditMark {
  at: number;
  offset: number;
}

/** The start of the log: every backup and the whole current file. */
export const LOG_START: AuditMark = { at: 0, offset: 0 };

/** auditMark is the audit log's position now. */
export function auditMark(file: string, now = Date.now()): AuditMark {
  let offset = 0;
  try {
    offset = statSync(file).size;
  } catch {
    // no log yet: everything written from now on is after the mark
  }
  return { at: now, offset };
}

/**
 * auditFiles lists the files that hold what was written since `mark`, oldest first, each with the
 * byte offset to start reading at. Backups are named by their rotation time, so the name orders
 * them; one whose last write is before the mark holds nothing after it.
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
  const backups = names
    .filter((n) => n.startsWith(prefix) && n.endsWith(ext))
    .sort()
    .map((n) => join(dir, n))
    .filter((p) => statSync(p).mtimeMs >= mark.at);
  const paths = [...backups, file].filter((p) => {
    try {
      statSync(p);
      return true;
    } catch {
      return false;
    }
  });
  // The first file is the one that was current at the mark: the offset belongs to it. (A mark taken
  // before any log existed has offset 0, which is right for any file.)
  return paths.map((path, i) => ({ path, offset: i === 0 ? mark.offset : 0 }));
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
