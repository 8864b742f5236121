import type { TestProject } from 'vitest/node';
import { createEmulator } from 'svc-emulator';

declare module 'vitest' {
  export interface ProvidedContext {
    emulator: { url: string; adminToken: string };
  }
}

/** Starts one emulator before any worker, on a free port, and tells every worker where it is. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await createEmulator({ clock: 'manual' });
  const url = await emulator.listen(0);
  project.provide('emulator', { url, adminToken: emulator.adminToken });
  return () => emulator.close();
}
