import type { Clock } from '../../clock/index.ts';
import type { Contract } from '../../contract/index.ts';
import type { Db } from '../../db.ts';
import type { FaultRules } from '../../faults/index.ts';
import type { Random } from '../../random/index.ts';
import type { ScenarioRegistry } from '../../scenarios/index.ts';
import type { StateDocument } from '../../state/index.ts';
import type { TaskEngine } from '../../tasks/index.ts';
import type { ResolveHost, Webhooks } from '../../webhooks/index.ts';

/** How many records the store holds after it was replaced whole. */
export interface StateCounts {
  accounts: number;
  keys: number;
  tasks: number;
}

/** The whole state at once: wiped and seeded again, written out, or replaced by a document (the lifecycle's). */
export interface StateOps {
  reset(): StateCounts;
  export(): StateDocument;
  import(document: StateDocument): StateCounts;
}

/** What the control operations read and steer. */
export interface ControlDeps {
  clock: Clock;
  db: Db;
  random: Random;
  engine: TaskEngine;
  scenarios: ScenarioRegistry;
  /** What a scenario loaded in-process is checked against, as the control API's are. */
  contract: Contract;
  webhooks: Webhooks;
  resolveHost: ResolveHost;
  state: StateOps;
  /** Faults injected at run time, which `/_emulator/faults` adds, lists and removes. */
  faults: FaultRules;
  config: {
    readonly allowInsecureWebhooks: boolean;
    readonly version: string;
  };
  status: {
    /** What the background check found wrong with the store, once it has run. */
    readonly storeDamage: string | null;
  };
}
