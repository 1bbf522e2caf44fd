// One child process run to completion, bounded, its output captured: shared by the demo and the etcd
// scenarios (a promise around spawn; never rejects, the exit code is part of the result).
import { spawn } from 'node:child_process';

/** Run is a finished command. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** run runs a command to completion (SIGTERM after `timeoutMs`, default 2 min); `echo` passes its stderr through. */
export function run(cmd: string, args: string[], o: { env?: Record<string, string>; stdin?: string; echo?: boolean; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((res) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...o.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGTERM'), o.timeoutMs ?? 120_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (o.echo) process.stderr.write(d);
    });
    child.on('error', (e) => (stderr += e.message));
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code: code ?? 1, stdout, stderr });
    });
    child.stdin.end(o.stdin ?? '');
  });
}
