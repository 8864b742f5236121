import type { ScenarioMatch } from '../scenarios/index.ts';
import { chatFormat, messagesFormat, responsesFormat } from '../text-formats/index.ts';
import type { TextFormat } from '../text-formats/index.ts';
import type { HarEntry } from './har.ts';
import { parseJson, redactedEntry } from './recorded-content.ts';

/**
 * How an imported text answer is matched: `request`, the whole request by its fingerprint (any change to it, a
 * temperature included, and the recorded answer no longer fits); `last-user`, the format, the model and the last
 * user message as recorded, so the answer survives a change elsewhere in the request.
 */
export type TextMatchMode = 'request' | 'last-user';

/** The Scenario schema's limit on `equals` (openapi/admin.yaml ScenarioTextCondition). */
const MAX_EQUALS = 100_000;

const FORMATS: Record<'chat' | 'responses' | 'messages', TextFormat> = { chat: chatFormat, responses: responsesFormat, messages: messagesFormat };

/**
 * A recorded call's rule by its content, and the key that tells two calls the rule cannot tell apart; or why it
 * has none: a request the format cannot read, no user message, or one the recording x'd out (without
 * --keep-content it matches nothing a client sends).
 */
export function lastUserRule(entry: HarEntry, format: 'chat' | 'responses' | 'messages'): { match: ScenarioMatch; key: string } | string {
  const body = parseJson(entry.request.postData?.text);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'no request body to match on';
  let view;
  try {
    view = FORMATS[format].parse(body as Record<string, unknown>).view;
  } catch {
    return 'a request the format could not read';
  }
  const { model, lastUser } = view;
  if (typeof model !== 'string' || model === '') return 'a request without a model';
  if (lastUser === null) return 'no user message to match on';
  if (redactedEntry(entry)) return 'last user message not in the recording (recorded without --keep-content)';
  if (lastUser.length > MAX_EQUALS) return `last user message too long for a rule (over ${MAX_EQUALS} characters)`;
  return {
    match: { formats: [format], models: [model], last_user: { equals: lastUser } },
    key: JSON.stringify([format, model, lastUser]),
  };
}
