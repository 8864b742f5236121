import { ApiError } from '../../errors/index.ts';
import { checkScenarios } from '../../scenarios/index.ts';
import type { Scenario } from '../../scenarios/index.ts';
import type { StoredTask, Task, TaskFailureCode, TaskOutput, TaskStatus } from '../../tasks/index.ts';
import type { ControlDeps } from './deps.ts';
import { pageOf } from './pages.ts';
import type { ListPage, PageQuery } from './pages.ts';
import { taskEntry, taskView } from './views.ts';
import type { TaskEntry } from './views.ts';

export interface TaskListQuery extends PageQuery {
  account?: string;
  status?: TaskStatus;
  model?: string;
}

/**
 * Steering tasks from the control API, any account's. Every step goes through the task engine, exactly as when
 * the clock brings it about.
 */
export function tasksControl({ db, engine }: Pick<ControlDeps, 'db' | 'engine'>) {
  const taskOf = (id: string): StoredTask => {
    const stored = db.tasks.get(id);
    if (!stored) throw new ApiError('not_found', `No task '${id}'.`);
    return stored;
  };
  const steer = (id: string, change: (stored: StoredTask) => Task): Task => db.store.transaction(() => change(taskOf(id)));
  return {
    /** Newest first. */
    list(query: TaskListQuery = {}): ListPage<TaskEntry> {
      const filter = {
        ...(query.account !== undefined ? { accountId: query.account } : {}),
        ...(query.status !== undefined ? { status: query.status } : {}),
        ...(query.model !== undefined ? { model: query.model } : {}),
      };
      return pageOf(query, (limit, offset) => db.tasks.page(filter, limit, offset), taskEntry);
    },
    get: (id: string): ReturnType<typeof taskView> => taskView(taskOf(id)),
    /** The next step of its scenario, now. */
    advance: (id: string): Task => steer(id, (stored) => engine.step(stored)),
    complete: (id: string, output?: Partial<TaskOutput>): Task => steer(id, (stored) => engine.complete(stored, output)),
    fail: (id: string, code: Exclude<TaskFailureCode, 'canceled'>, message?: string): Task =>
      steer(id, (stored) => engine.fail(stored, code, message)),
    /** The same cancel as POST /v1/tasks/{id}/cancel, for any account's task. */
    cancel: (id: string): Task => steer(id, (stored) => engine.cancel(stored)),
  };
}

/** The scenarios tasks and text calls follow: the built-in ones, the start's and those loaded since. */
export function scenariosControl({ scenarios, contract }: Pick<ControlDeps, 'scenarios' | 'contract'>) {
  return {
    /** The scenarios in force, and the text calls each answered since it was loaded or the last reset. */
    list(): { object: 'list'; data: Scenario[]; uses: Record<string, number> } {
      const data = scenarios.list();
      return { object: 'list', data, uses: Object.fromEntries(data.map((s) => [s.name, scenarios.uses(s.name)])) };
    },
    /**
     * Checked as `POST /_emulator/scenarios` checks them (422 invalid_params naming each bad field, defaults filled
     * in: a call in-process is refused as the control API's is); one with a loaded one's name replaces it.
     */
    load(loaded: Scenario[]): { object: 'list'; data: Scenario[] } {
      const checked = checkScenarios(contract, { scenarios: loaded });
      scenarios.load(checked);
      return { object: 'list', data: checked };
    },
  };
}
