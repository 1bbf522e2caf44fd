import { readFileSync } from 'node:fs';
// Process figures from /proc for the benchmarks (Linux): CPU time and resident memory of a pid.

/** readProc reads /proc/PID/FILE, naming the process when it is gone (it exited mid-benchmark). */
function readProc(pid: number | undefined, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    throw new Error(`process ${pid} exited during the benchmark (its stderr is above)`);
  }
}

/** cpuSeconds is a process's CPU time so far (utime + stime, in USER_HZ of 100): 10 ms resolution. */
export function cpuSeconds(pid: number | undefined): number {
  const f = readProc(pid, 'stat');
  // Fields after the command name, which is in parentheses and may itself contain spaces.
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** rssMb is a process's current resident memory (VmRSS) in MB. */
export function rssMb(pid: number | undefined): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readProc(pid, 'status'))?.[1] ?? NaN) / 1024;
}

/** peakRssMb is a process's peak resident memory (VmHWM) in MB. */
export function peakRssMb(pid: number | undefined): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readProc(pid, 'status'))?.[1] ?? NaN) / 1024;
}
