// Reading a .heapsnapshot file into a RawSnapshot, and loading one into a HeapGraph.
//
// Parsing: not JSON.parse of the whole file, which was tried first: simple, but on a loaded 2-core machine
// it took 16 s to read a 200 MB snapshot, most of it in the string table (see scanStrings), and built JS
// arrays of 8 bytes per number that then had to be copied. Instead the two big number arrays (nodes,
// edges: most of the file) are read by a byte scanner straight into Uint32Arrays, the string table string
// by string, and only the small rest (meta) by JSON.parse: 2 s for the same file. Not streaming either:
// the peak is about three times the file (600 MB RSS for 200 MB), within the default heap, and a
// streaming parser would cost far more code for the controller's 50–150 MB snapshots.
import { readFileSync } from 'node:fs';
import { readSnapshot, type HeapGraph, type RawSnapshot } from './graph.js';

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** arrayStart finds `"key": [` in JSON bytes and returns where the `[` is. */
function arrayStart(bytes: Buffer, key: string): number {
  // Inside a JSON string a quote is escaped, so `"key"` followed by a colon can only be an object key.
  for (let at = bytes.indexOf(`"${key}"`); at >= 0; at = bytes.indexOf(`"${key}"`, at + 1)) {
    let i = at + key.length + 2;
    while (isSpace(bytes[i])) i++;
    if (bytes[i++] !== 0x3a) continue;
    while (isSpace(bytes[i])) i++;
    if (bytes[i] === 0x5b) return i;
  }
  throw new Error(`heap snapshot: no "${key}" array`);
}

/**
 * scanStrings reads the JSON array of strings whose `[` is at open and says where its `]` is. Each string
 * is decoded on its own, and through JSON.parse only if it holds an escape. JSON.parse of a whole table
 * is slow on families of similar short strings (10 s for the 660k strings of a 200 MB snapshot, 13 s for
 * 600k strings "r1000000", "r1000001", …, likely collisions as V8 internalizes short strings while it
 * parses); decoded one by one they take well under a second.
 */
export function scanStrings(bytes: Buffer, open: number): { values: string[]; close: number } {
  const values: string[] = [];
  let i = open + 1;
  for (;;) {
    while (isSpace(bytes[i]) || bytes[i] === 0x2c) i++;
    if (bytes[i] === 0x5d) return { values, close: i };
    if (bytes[i] !== 0x22) throw new Error(`heap snapshot: expected a string at byte ${i}`);
    const start = ++i;
    let escaped = false;
    // Bytes of a multi-byte UTF-8 character are all ≥ 0x80, so a quote or backslash byte is one.
    for (let c = bytes[i]; c !== 0x22; c = bytes[i]) {
      if (c === undefined) throw new Error('heap snapshot: unterminated string');
      if (c === 0x5c) {
        escaped = true;
        i++;
      }
      i++;
    }
    values.push(escaped ? (JSON.parse(bytes.toString('utf8', start - 1, i + 1)) as string) : bytes.toString('utf8', start, i));
    i++;
  }
}

/** scanNumbers reads the comma-separated non-negative integers between from and to (exclusive) into a Uint32Array. */
export function scanNumbers(bytes: Buffer, from: number, to: number): Uint32Array {
  let count = 0;
  let inNumber = false;
  for (let i = from; i < to; i++) {
    const digit = bytes[i]! >= 0x30 && bytes[i]! <= 0x39;
    if (digit && !inNumber) count++;
    inNumber = digit;
  }
  const out = new Uint32Array(count);
  let k = 0;
  let value = -1;
  for (let i = from; i <= to; i++) {
    const c = i < to ? bytes[i]! : 0x2c;
    if (c >= 0x30 && c <= 0x39) {
      value = value < 0 ? c - 0x30 : value * 10 + c - 0x30;
    } else if (c === 0x2c || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      if (value >= 0) {
        if (value > 0xffffffff) throw new Error(`heap snapshot: number ${value} at byte ${i} does not fit 32 bits`);
        out[k++] = value;
        value = -1;
      }
    } else {
      throw new Error(`heap snapshot: unexpected ${JSON.stringify(String.fromCharCode(c))} at byte ${i} in a number array`);
    }
  }
  return out;
}

/** numberSpan finds the `[` and `]` of the number array under key; a number array holds no `]` in between. */
function numberSpan(bytes: Buffer, key: string): { open: number; close: number } {
  const open = arrayStart(bytes, key);
  const close = bytes.indexOf(0x5d, open);
  if (close < 0) throw new Error(`heap snapshot: "${key}" is not closed`);
  return { open, close };
}

/** parseSnapshot parses the bytes of a .heapsnapshot file (see the top of this file for how and why). */
export function parseSnapshot(bytes: Buffer): RawSnapshot {
  const nodes = numberSpan(bytes, 'nodes');
  const edges = numberSpan(bytes, 'edges');
  const stringsOpen = arrayStart(bytes, 'strings');
  const strings = scanStrings(bytes, stringsOpen);
  // What is left (meta and any small arrays) is parsed as JSON with the three big arrays emptied.
  const big = [nodes, edges, { open: stringsOpen, close: strings.close }].sort((x, y) => x.open - y.open);
  const parts: Buffer[] = [];
  let from = 0;
  for (const { open, close } of big) {
    parts.push(bytes.subarray(from, open + 1));
    from = close;
  }
  parts.push(bytes.subarray(from));
  const rest = JSON.parse(Buffer.concat(parts).toString('utf8')) as RawSnapshot;
  return { ...rest, nodes: scanNumbers(bytes, nodes.open + 1, nodes.close), edges: scanNumbers(bytes, edges.open + 1, edges.close), strings: strings.values };
}

/** loadSnapshot reads and parses a .heapsnapshot file into typed arrays. */
export function loadSnapshot(file: string): HeapGraph {
  return readSnapshot(parseSnapshot(readFileSync(file)));
}
