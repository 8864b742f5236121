import { vi } from 'vitest';
import { conformance, parseConformanceOptions } from '../../src/cli/conformance.ts';
import { parity, parseParityOptions } from '../../src/cli/parity.ts';
import { storeCommand } from '../../src/cli/store.ts';

/**
 * A command of the CLI run in this process: its own code (src/cli/<command>.ts), the exit code it hands to
 * `process.exit` and the lines it printed, without the CPU time a process's start costs. For a test about what
 * the command finds, prints or refuses, not about the process: an error that src/cli/main.ts prints as one line
 * (exit 2) is thrown here as it reaches main. The tests that spawn the real command keep the process's side covered.
 * One at a time: the output is read from `console`.
 */
export interface InProcessRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Both, in the order printed. */
  output: string;
}

export async function inProcess(command: () => Promise<number>): Promise<InProcessRun> {
  const streams = { stdout: '', stderr: '', output: '' };
  const to = (stream: 'stdout' | 'stderr') => (...values: unknown[]): void => {
    const line = `${values.map(String).join(' ')}\n`;
    streams[stream] += line;
    streams.output += line;
  };
  const spies = [
    vi.spyOn(console, 'log').mockImplementation(to('stdout')),
    vi.spyOn(console, 'info').mockImplementation(to('stdout')),
    vi.spyOn(console, 'error').mockImplementation(to('stderr')),
    vi.spyOn(console, 'warn').mockImplementation(to('stderr')),
  ];
  try {
    return { code: await command(), ...streams };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

/** `svc-emulator store ARGS` in this process. */
export const storeInProcess = (args: string[]): Promise<InProcessRun> => inProcess(() => storeCommand(args));

/** `svc-emulator parity ARGS` in this process. */
export const parityInProcess = (args: string[]): Promise<InProcessRun> => inProcess(() => parity(parseParityOptions(args)));

/** `svc-emulator conformance ARGS` in this process. */
export const conformanceInProcess = (args: string[]): Promise<InProcessRun> => inProcess(() => conformance(parseConformanceOptions(args)));
