import { ApiError } from '../../errors/index.ts';
import { checkRules } from '../../faults/index.ts';
import type { FaultFile, FaultRule } from '../../faults/index.ts';
import type { ControlDeps } from './deps.ts';

/**
 * Faults injected at run time: rules added (tried after those already in force), listed with how many requests
 * or callbacks each matched and injected into, removed. A reset removes them all (the lifecycle's part).
 * @see openapi/admin.yaml tag `faults`
 */
export function faultsControl({ faults }: Pick<ControlDeps, 'faults'>) {
  return {
    list: (): { data: FaultRule[] } => ({ data: faults.list() }),
    /** Rules already in the document's shape (`AddFaultsRequest`); what the shape cannot say is checked here. */
    add(body: FaultFile): { data: FaultRule[] } {
      checkRules(body.rules);
      return { data: faults.add(body.rules, body.seed) };
    },
    /** The rule removed, with its last counts. */
    remove(id: string): FaultRule {
      const rule = faults.list().find((r) => r.id === id);
      if (!rule || !faults.remove(id)) throw new ApiError('not_found', `No fault rule '${id}'.`);
      return rule;
    },
    clear(): { removed: number } {
      const removed = faults.list().length;
      faults.clear();
      return { removed };
    },
  };
}
