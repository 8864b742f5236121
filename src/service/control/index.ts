import { accountsControl } from './accounts.ts';
import { callbacksControl } from './callbacks.ts';
import { clockControl } from './clock.ts';
import type { ControlDeps } from './deps.ts';
import { faultsControl } from './faults.ts';
import { keysControl } from './keys.ts';
import { recordsControl } from './records.ts';
import { stateControl } from './state.ts';
import { scenariosControl, tasksControl } from './tasks.ts';
import { verdictControl } from './verdict.ts';
import type { VerdictDeps } from './verdict.ts';

/**
 * Every operation of the control API as typed functions, implemented once: the HTTP control API (/_emulator),
 * `emulator.control` and the tests all call it (as WireMock's `Admin`). Answers are the control API's shapes.
 */
export function createControl(deps: ControlDeps & VerdictDeps) {
  const state = stateControl(deps);
  const { health, ...clock } = clockControl(deps);
  return {
    /** What GET /_emulator/health answers (the one operation without the admin token). */
    health,
    clock,
    accounts: accountsControl(deps),
    keys: keysControl(deps),
    tasks: tasksControl(deps),
    scenarios: scenariosControl(deps),
    records: recordsControl(deps),
    callbacks: callbacksControl(deps),
    verdict: verdictControl(deps),
    faults: faultsControl(deps),
    state: { export: state.export, import: state.import },
    reset: state.reset,
  };
}

export type Control = ReturnType<typeof createControl>;
export type { ControlDeps, StateCounts, StateOps } from './deps.ts';
export type { ListPage, PageQuery } from './pages.ts';
export { knownOf, versionOf } from './pages.ts';
export type { NewAccountInput, LedgerQuery } from './accounts.ts';
export type { TaskListQuery } from './tasks.ts';
export type { DeliveryListQuery } from './callbacks.ts';
export type { RecordListQuery } from './records.ts';
export type { ClockView, Health } from './clock.ts';
export type { TaskEntry } from './views.ts';
export type { ProbeRequest, ProbeResponse, VerdictDeps, VerdictFilter } from './verdict.ts';
