import { createRandom } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import { callbackRuleTakes, requestRuleTakes } from './match.ts';
import { CALLBACK_FAULTS } from './types.ts';
import type { CallbackFacts, CallbackFault, CallbackRule, FaultRule, RequestFacts, RequestFault, RequestRule, RuleInput } from './types.ts';

/** Rules added together share one generator: the same seed and the same order of requests inject the same faults. */
interface Batch {
  random: Random;
  rules: FaultRule[];
}

export interface FaultRules {
  /** True while no rule is loaded: the request path asks this and nothing else. */
  readonly empty: boolean;
  add(rules: readonly RuleInput[], seed?: string): FaultRule[];
  list(): FaultRule[];
  remove(id: string): boolean;
  clear(): void;
  /** The fault for this request, if a rule takes it and its chance comes up; counts the rule's hit. */
  forRequest(facts: RequestFacts): { rule: RequestRule; fault: RequestFault } | null;
  forCallback(facts: CallbackFacts): { rule: CallbackRule; fault: CallbackFault } | null;
}

export const isCallbackRule = (rule: RuleInput): boolean => (CALLBACK_FAULTS as readonly string[]).includes(rule.fault.kind);

/** `seedless` draws the seed of a batch added without one (a random one unless the emulator itself is seeded). */
export function createFaultRules(seedless: () => string): FaultRules {
  let batches: Batch[] = [];
  let nextId = 1;

  function* rules(): Generator<{ rule: FaultRule; random: Random }> {
    for (const batch of batches) for (const rule of batch.rules) yield { rule, random: batch.random };
  }

  // Counting a match spends one of `times` whether or not the chance comes up: "the first N matching requests".
  function fires(rule: FaultRule, random: Random): boolean {
    if (rule.times !== undefined && rule.matched >= rule.times) return false;
    rule.matched += 1;
    if (rule.probability !== undefined && rule.probability < 1 && !chance(random, rule.probability)) return false;
    rule.hits += 1;
    return true;
  }

  return {
    get empty() {
      return batches.length === 0;
    },
    add(inputs, seed) {
      const added = inputs.map((input) => ({ ...structuredClone(input), id: `fault_${nextId++}`, matched: 0, hits: 0 }) as FaultRule);
      batches.push({ random: createRandom(seed ?? seedless()), rules: added });
      return added.map(view);
    },
    list: () => [...rules()].map(({ rule }) => view(rule)),
    remove(id) {
      const before = batches.reduce((n, b) => n + b.rules.length, 0);
      batches = batches.map((b) => ({ ...b, rules: b.rules.filter((r) => r.id !== id) })).filter((b) => b.rules.length > 0);
      return batches.reduce((n, b) => n + b.rules.length, 0) < before;
    },
    clear() {
      batches = [];
      nextId = 1;
    },
    forRequest(facts) {
      for (const { rule, random } of rules()) {
        if (isCallbackRule(rule) || !requestRuleTakes(rule as RequestRule, facts)) continue;
        if (fires(rule, random)) return { rule: rule as RequestRule, fault: rule.fault as RequestFault };
      }
      return null;
    },
    forCallback(facts) {
      for (const { rule, random } of rules()) {
        if (!isCallbackRule(rule) || !callbackRuleTakes(rule as CallbackRule, facts)) continue;
        if (fires(rule, random)) return { rule: rule as CallbackRule, fault: rule.fault as CallbackFault };
      }
      return null;
    },
  };
}

/** A copy, so a caller holding a listed rule does not see (or change) later counts. */
const view = (rule: FaultRule): FaultRule => structuredClone(rule);

/** True with chance `p`, from 2^32 equal steps of the generator. */
const chance = (random: Random, p: number): boolean => random.int(0x1_0000_0000) < p * 0x1_0000_0000;
