import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { busier } from './busy.ts';
import { cliBin } from './cli-build.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `svc-emulator ARGS` started from the project's root, its output piped, for a test that watches it run. The
 * command is the checkout's, laid out as the installed package runs it (test/support/cli-build.ts).
 */
export const spawnCommand = (args: string[]): ChildProcessWithoutNullStreams => spawn(process.execPath, [cliBin(), ...args], { cwd: ROOT, stdio: 'pipe' });

/**
 * `svc-emulator ARGS` to its end, with what it printed. A run still going after `killAfterMs` (times `busier` on a
 * busy machine) is killed (and then fails on its exit code), never left behind.
 */
export function runCommand(args: string[], killAfterMs: number): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawnCommand(args);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs * busier);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
