import { redactedText } from '../recording/index.ts';

/**
 * Where a recorded answer and a replayed one may rightly differ: values the service generates afresh on every
 * call (ids, times, text, token counts, file addresses) and what the recording redacted. A masked value is
 * compared on presence and JSON type only (`parity.body.shape`, `parity.stream.events`); everything else is
 * compared exactly (`parity.body.values`, `parity.stream.values`): status, error.code and type, task status,
 * points strings, model, finish and stop reasons, object types.
 * @see reference "Conventions" (the id prefixes) and "Text usage"
 */

/** A leaf of a JSON body as a mask rule sees it. */
export interface MaskContext {
  /** Keys and indices from the root (for a stream, from the event's data). */
  path: readonly (string | number)[];
  /** The last object key on the path: for an array item, its array's key; '' at the root. */
  key: string;
  /** The object the leaf sits in (undefined for an array item or the root). */
  parent: Record<string, unknown> | undefined;
  recorded: unknown;
  replayed: unknown;
  /** The recording says it replaced content or secrets in this exchange (`_svcEmulator.redacted`). */
  redacted: boolean;
}

export interface MaskRule {
  id: string;
  /** What it masks, in the words the README uses. */
  masks: string;
  applies(leaf: MaskContext): boolean;
}

/** Task ids, file ids, text call ids, request ids and webhook message ids, as the reference gives their forms. */
export const ID_VALUE = /^(T\d{12}[A-Z0-9]{6}|file_\d+|(svcchat|svcresp|svcmsg|req|msg)_[A-Za-z0-9]+)$/;
const TEXT_KEYS = new Set(['content', 'text', 'delta', 'arguments', 'partial_json', 'output_text', 'refusal', 'thinking']);
const FILE_KEYS = new Set(['url', 'cover_url', 'size']);
/** The recorder's markers: `[redacted]` (a header, a query value, `sk-[redacted]`) and `[redacted bearer token]`. */
const REDACTED_MARK = /\[redacted( bearer token)?\]/i;

const isString = (value: unknown): value is string => typeof value === 'string';
const hasKey = (path: MaskContext['path'], key: string): boolean => path.includes(key);

/** The rules, in the order they are tried; the first that applies names the mask. */
export const MASK_RULES: readonly MaskRule[] = [
  {
    id: 'ids',
    masks: 'ids: keys `id` (but a model’s, in an object whose `object` is `model`) and `*_id`, `system_fingerprint`, and strings with the reference’s id forms (T + 12 digits + 6, file_N, svcchat_, svcresp_, svcmsg_, req_, msg_)',
    applies: ({ key, parent, recorded, replayed }) =>
      (key === 'id' && parent?.['object'] !== 'model') ||
      key.endsWith('_id') ||
      key === 'system_fingerprint' ||
      (isString(recorded) && ID_VALUE.test(recorded)) ||
      (isString(replayed) && ID_VALUE.test(replayed)),
  },
  {
    id: 'times',
    masks: 'times: keys `*_at`, `created`, `timestamp`',
    applies: ({ key }) => key.endsWith('_at') || key === 'created' || key === 'timestamp',
  },
  {
    id: 'text',
    masks: 'generated text: string values of keys content, text, delta, arguments (tool arguments), partial_json, output_text, refusal, thinking; `message` anywhere inside an `error` (error.message, error.details[].message)',
    applies: ({ key, path, recorded }) => (isString(recorded) && TEXT_KEYS.has(key)) || (key === 'message' && hasKey(path, 'error')),
  },
  {
    id: 'usage',
    masks: 'usage: everything under a `usage` key (text usage, a task’s output.usage), and any `*_tokens` count',
    applies: ({ key, path }) => hasKey(path, 'usage') || key.endsWith('_tokens'),
  },
  {
    id: 'files',
    masks: 'file addresses and sizes: keys url, cover_url, size',
    applies: ({ key }) => FILE_KEYS.has(key),
  },
  {
    id: 'stream-positions',
    masks: 'sequence_number of stream events (it counts the deltas before it, and their number follows the generated text)',
    applies: ({ key }) => key === 'sequence_number',
  },
  {
    id: 'redacted',
    masks: 'strings the recording redacted: containing `[redacted]`, or all `x` (spaces kept) in an exchange whose `_svcEmulator.redacted` lists content or secrets',
    applies: ({ recorded, redacted }) => isString(recorded) && (REDACTED_MARK.test(recorded) || (redacted && redactedText(recorded))),
  },
];

/** The last object key on a path (MaskContext.key): for an array item, its array's key; '' when there is none. */
export const lastKey = (path: MaskContext['path']): string => [...path].reverse().find((seg): seg is string => typeof seg === 'string') ?? '';

/** The id of the first rule that masks this leaf, or null when its value is compared exactly. */
export function maskOf(leaf: MaskContext): string | null {
  return MASK_RULES.find((rule) => rule.applies(leaf))?.id ?? null;
}
