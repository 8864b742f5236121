import type { ClockMode } from '../clock/index.ts';
import type { FaultFile } from '../faults/index.ts';
import type { Scenario } from '../scenarios/index.ts';
import type { StateDocument } from '../state/index.ts';

/** A new session's accounts, when not the one demo account: each gets a random id, key and secret. */
export interface SessionAccountInput {
  points?: string;
  webhook_url?: string | null;
}

/** One account a session is seeded with, in the shape of fixtures/seed.json. */
export interface SeededAccount {
  id: string;
  points: string;
  webhook_url: string | null;
  webhook_secret: string;
  keys: string[];
}

/** The body of `POST /_emulator/sessions` (openapi/admin.yaml CreateSessionRequest), checked. */
export interface NewSession {
  name?: string;
  clock?: { mode?: ClockMode; speed?: number; start_time?: string };
  seed?: string;
  accounts?: SessionAccountInput[];
  state?: StateDocument;
  scenarios?: Scenario[];
  faults?: FaultFile;
  ttl_seconds?: number;
}

/** How a session is kept in the default store's registry, to be built again at the next start. */
export interface SessionRecord {
  id: string;
  name: string;
  admin_token: string;
  /** Host-clock epoch ms. */
  created_ms: number;
  ttl_seconds: number | null;
  clock: { mode: ClockMode; speed: number };
  seed: string | null;
  /**
   * What the session's store is seeded with, at its creation and again by each reset: its accounts with the ids,
   * keys and secrets drawn when it was made (a reset keeps them, as the default world keeps its demo key); null
   * for a session made from a state document, whose reset imports that document again.
   */
  accounts: SeededAccount[] | null;
  /** Fault rules in force from each start until removed. */
  faults: FaultFile | null;
}

/** A session as the control API shows it (openapi/admin.yaml Session). */
export interface SessionView {
  object: 'session';
  id: string;
  name: string;
  created_at: string;
  last_used_at: string;
  ttl_seconds: number | null;
  expires_at: string | null;
  clock: { mode: ClockMode; speed: number; now: string };
  size: { accounts: number; tasks: number; calls: number; deliveries: number; bytes: number };
}

/** What creating one answers: the session and how to reach it (openapi/admin.yaml SessionCreated). */
export interface SessionCreated extends SessionView {
  admin_token: string;
  key: string;
  account: Record<string, unknown>;
  webhook_secret: string;
}

/**
 * What `/_emulator/sessions` does in one world: the default one's reaches every session; a session's own sees
 * only itself (any other id is 404, as if it did not exist) and cannot make one.
 */
export interface SessionsControl {
  create(input: NewSession): Promise<SessionCreated>;
  /** `scope`: whose list it is: the emulator's token sees every session, a session's token only its own. */
  list(): { object: 'list'; scope: 'emulator' | 'session'; data: SessionView[] };
  get(id: string): SessionView;
  delete(id: string): Promise<{ ok: true; id: string }>;
}
