import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { isEmpty, seedStore } from './accounts/index.ts';
import { createApp } from './app.ts';
import { createClock } from './clock/index.ts';
import type { Clock, ClockMode } from './clock/index.ts';
import { createContract } from './contract/index.ts';
import type { Contract } from './contract/index.ts';
import { commit } from './http/index.ts';
import { createRandom, ids } from './random/index.ts';
import { openStore } from './store/index.ts';
import type { Store } from './store/index.ts';
import { VERSION } from './version.ts';

export interface EmulatorOptions {
  /** JSON file for the store; without it the store lives in memory. */
  db?: string;
  clock?: ClockMode;
  /** Real clock only: run this many times faster than the wall clock. */
  speed?: number;
  /** Virtual time to start a fresh clock at (epoch ms or ISO 8601); default: now, or where a stored clock stopped. */
  startTime?: number | string;
  adminToken?: string;
  allowInsecureWebhooks?: boolean;
  /** Makes ids and generated data repeatable. */
  seed?: string;
  bodyLimit?: string;
  log?: (message: string) => void;
}

export interface Emulator {
  app: Express;
  clock: Clock;
  store: Store;
  contract: Contract;
  adminToken: string;
  /** Starts listening; resolves with the base address (`http://127.0.0.1:4010`). */
  listen(port?: number, host?: string): Promise<string>;
  server: Server | null;
  /** Stops listening, flushes the store and stops the clock. */
  close(): Promise<void>;
}

/** Builds a whole emulator in-process: the programmatic entry for test suites, and what `start` runs. */
export async function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const store = await openStore(options.db ? { path: options.db } : {});
  const clock = createClock({
    mode: options.clock ?? 'real',
    ...(options.speed !== undefined ? { speed: options.speed } : {}),
    ...(options.startTime !== undefined ? { startMs: new Date(options.startTime).getTime() } : {}),
    // Virtual time never runs backwards across a restart: tasks already stored keep their order.
    ...(store.data.clock_ms !== null ? { notBeforeMs: store.data.clock_ms } : {}),
  });
  const random = createRandom(options.seed);
  const adminToken = options.adminToken ?? ids.adminToken(createRandom());
  const contract = createContract();
  const log = options.log ?? ((message: string) => console.error(message));

  if (isEmpty(store.data)) {
    seedStore(store.data, random, clock.now());
    await commit({ clock, store });
  }

  const app = createApp({
    clock,
    store,
    random,
    contract,
    log,
    config: {
      adminToken,
      allowInsecureWebhooks: options.allowInsecureWebhooks ?? false,
      bodyLimit: options.bodyLimit ?? '1mb',
      version: VERSION,
    },
  });

  const emulator: Emulator = {
    app,
    clock,
    store,
    contract,
    adminToken,
    server: null,
    listen(port = 4010, host = '127.0.0.1') {
      const server = createServer(app);
      emulator.server = server;
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address() as AddressInfo;
          const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
          resolve(`http://${shownHost}:${address.port}`);
        });
      });
    },
    async close() {
      const server = emulator.server;
      if (server) {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
      }
      await commit({ clock, store });
      clock.stop();
    },
  };
  return emulator;
}
