import type { Exchange } from '../wire/index.ts';
import type { Client } from './client.ts';
import type { OwnAccount } from './own-account.ts';
import type { ResponseContract } from './spec.ts';

export type Group = 'wire' | 'validation' | 'tasks' | 'billing' | 'lifecycle' | 'text' | 'callbacks' | 'files' | 'limits';

/** What a check may need beyond the deployment and one key. */
export type Need = 'secondKey' | 'webhook' | 'admin';

export interface Check {
  /** Stable id: `tasks.idempotency.replay`. */
  id: string;
  group: Group;
  title: string;
  /** Points the check may spend on a real deployment (before refunds). */
  cost: number;
  needs?: Need[];
  run(ctx: CheckContext): Promise<void>;
}

/** A callback as received by the suite's receiver. */
export interface ReceivedCallback {
  headers: Record<string, string>;
  raw: string;
  /** The path it was sent to (without the query), as the receiver saw it. */
  path?: string;
  /** The HTTP status the receiver answered (500 for a delivery it was told to fail). */
  answered?: number;
  /**
   * When it came on the receiver's own (wall) clock, epoch ms: what a receiver holds webhook-timestamp against
   * ("differs from the current time by more than 5 minutes"), whatever the deployment's clock says.
   */
  receivedWallMs?: number;
  /** When it came, on the deployment's clock as the suite estimates it (src/conformance/deployment-clock.ts). */
  receivedMs?: number;
}

export interface CheckContext {
  api: Client;
  /** The text model the text checks call (`--text-model`; default svc-text-lite). */
  textModel: string;
  /** A key of another account, when given. */
  other: Client | null;
  contract: ResponseContract;
  /** Waits `seconds` of the deployment's time: the emulator's clock through the control API, else real time. */
  wait(seconds: number): Promise<void>;
  admin: { url: string; token: string } | null;
  /** The suite's own account through the control API (its balance read around a request, more keys of it); null without it. */
  ownAccount?: OwnAccount | null;
  webhook: { url: string; secret: string; received: ReceivedCallback[]; waitFor(count: number, seconds: number): Promise<void> } | null;
  /** Asserts, or fails the check naming what was expected against what came back. */
  expect(condition: boolean, message: string, exchange: Exchange | null, expected?: unknown, actual?: unknown): void;
}

export type Status = 'passed' | 'failed' | 'skipped';

export interface CheckResult {
  id: string;
  group: Group;
  title: string;
  status: Status;
  durationMs: number;
  reason?: string;
  failure?: {
    message: string;
    request: { method: string; path: string; requestId: string | null } | null;
    expected?: unknown;
    actual?: unknown;
    curl: string | null;
  };
}
