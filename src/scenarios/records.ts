import type { Store } from '../store/index.ts';
import { bodies } from '../store/index.ts';
import type { Scenario } from './types.ts';

/** Scenarios loaded at run time, newest load first and each load in its own order. */
export interface ScenariosRepo {
  all(): Scenario[];
  /** Adds a load ahead of the earlier ones; a name in use is replaced. */
  load(scenarios: Scenario[]): void;
  /** Changes when the store is replaced whole (a reset, a state import): what was counted of its scenarios goes. */
  epoch(): number;
}

export function scenariosRepo(store: Store): ScenariosRepo {
  const { driver } = store;
  // Read on every submission: kept until a load or a reset changes them (a load's rollback drops the copy too).
  let cached: { epoch: number; scenarios: Scenario[] } | null = null;
  return {
    all() {
      if (cached?.epoch !== store.epoch) {
        cached = { epoch: store.epoch, scenarios: bodies<Scenario>(driver.prepare('SELECT body FROM scenarios ORDER BY seq DESC').all()) };
      }
      return cached.scenarios;
    },
    epoch: () => store.epoch,
    load(scenarios) {
      cached = null;
      store.afterCommit(() => (cached = null));
      store.transaction(() => {
        for (const scenario of scenarios) driver.prepare('DELETE FROM scenarios WHERE name = ?').run(scenario.name);
        // Inserted last to first, so the newest-first order lists this load in its own order.
        for (const scenario of [...scenarios].reverse()) {
          driver.prepare('INSERT INTO scenarios (name, body) VALUES (?, ?)').run(scenario.name, JSON.stringify(scenario));
        }
      });
    },
  };
}
