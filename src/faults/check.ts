import { invalidParams } from '../errors/index.ts';
import type { ErrorDetail } from '../errors/index.ts';
import { isCallbackRule } from './rule-set.ts';
import type { RuleInput } from './types.ts';

const REQUEST_ONLY = ['method', 'path', 'model', 'key'] as const;

/**
 * What the document's schema cannot say of a rule set: a request fault matches requests and a callback fault
 * callbacks, so each takes only its own match fields. Throws 422 `invalid_params` naming each wrong field.
 */
export function checkRules(rules: readonly RuleInput[]): void {
  const details: ErrorDetail[] = [];
  rules.forEach((rule, i) => {
    const match: Record<string, unknown> = { ...rule.match };
    const wrong = isCallbackRule(rule) ? REQUEST_ONLY.filter((f) => match[f] !== undefined) : match['event'] !== undefined ? ['event'] : [];
    for (const field of wrong) {
      details.push({
        field: `rules[${i}].match.${field}`,
        message: isCallbackRule(rule) ? `a ${rule.fault.kind} fault takes callbacks: match them by event and account` : 'a request fault takes /v1 requests: event matches callbacks',
      });
    }
  });
  if (details.length > 0) throw invalidParams(details);
}
