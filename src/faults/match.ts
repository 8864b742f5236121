import type { CallbackFacts, CallbackRule, RequestFacts, RequestRule } from './types.ts';

/** A path pattern is exact, or a prefix when it ends in `*`. */
export function pathMatches(pattern: string, path: string): boolean {
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern;
}

export function requestRuleTakes(rule: RequestRule, facts: RequestFacts): boolean {
  const m = rule.match ?? {};
  return (
    (m.method === undefined || m.method.toUpperCase() === facts.method.toUpperCase()) &&
    (m.path === undefined || pathMatches(m.path, facts.path)) &&
    (m.model === undefined || m.model === facts.model) &&
    (m.key === undefined || m.key === facts.key) &&
    (m.account === undefined || m.account === facts.account)
  );
}

export function callbackRuleTakes(rule: CallbackRule, facts: CallbackFacts): boolean {
  const m = rule.match ?? {};
  return (m.event === undefined || m.event === facts.event) && (m.account === undefined || m.account === facts.account);
}
