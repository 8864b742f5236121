import type { Exchange } from '../wire/index.ts';
import { isPlainObject } from '../contract/index.ts';
import { diffJson } from './json-diff.ts';
import type { DiffOptions } from './json-diff.ts';
import type { CheckOutcome, Finding } from './types.ts';

/** An event as parseSse reads it off the wire. */
type SseEvent = Exchange['events'][number];

/** An event as the comparison names it, with its data parsed when it is JSON. */
interface Named {
  name: string;
  data: unknown;
}

function parsed(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return data;
  }
}

/**
 * The name of an event: its `event:` field (Responses and Messages formats); else its data's `type`; else, for
 * the Chat Completions format, whose events are unnamed, `chat.completion.chunk[...]` with what the chunk carries
 * (role, content, tool_calls, finish_reason, usage), `[DONE]`, or `error`.
 */
export function eventName(event: SseEvent): string {
  if (event.event !== null && event.event !== '' && event.event !== 'message') return event.event;
  if (event.data.trim() === '[DONE]') return '[DONE]';
  const data = parsed(event.data);
  if (!isPlainObject(data)) return 'data';
  if (typeof data['type'] === 'string') return data['type'];
  if (data['error'] !== undefined) return 'error';
  if (typeof data['object'] !== 'string') return 'data';
  const choice = Array.isArray(data['choices']) && isPlainObject(data['choices'][0]) ? data['choices'][0] : {};
  const delta = isPlainObject(choice['delta']) ? choice['delta'] : {};
  const carries = [
    delta['role'] != null ? 'role' : null,
    delta['content'] != null ? 'content' : null,
    delta['tool_calls'] != null ? 'tool_calls' : null,
    choice['finish_reason'] != null ? 'finish_reason' : null,
    data['usage'] != null ? 'usage' : null,
  ].filter((c) => c !== null);
  return `${data['object']}[${carries.join(',')}]`;
}

/**
 * Events that come many to an answer, as many as the generated text has pieces (a run of one counts once):
 * content_block_delta, the Responses format's response.*.delta, and chat chunks that carry only content or
 * tool call pieces.
 */
const isDelta = (name: string): boolean => name === 'content_block_delta' || /^response\..+\.delta$/.test(name) || /^chat\.completion\.chunk\[(content|tool_calls)\]$/.test(name);

/** The events with each run of one delta event collapsed to its first event. */
export function collapsed(events: readonly SseEvent[]): Named[] {
  const out: Named[] = [];
  for (const event of events) {
    const name = eventName(event);
    if (isDelta(name) && out.at(-1)?.name === name) continue;
    out.push({ name, data: parsed(event.data) });
  }
  return out;
}

const sequence = (events: Named[]): string => events.map((e) => (isDelta(e.name) ? `${e.name}*` : e.name)).join(', ');

/**
 * `parity.stream.events`: the collapsed event-name sequences are equal, and each event's data has the shape of
 * its recorded counterpart (the first event of a collapsed run stands for the run). `parity.stream.values`:
 * the data's values agree, masks aside, as far as the two sequences go together.
 */
export function compareStreams(recorded: readonly SseEvent[], replayed: readonly SseEvent[], options: Pick<DiffOptions, 'redacted' | 'rewrite'>): CheckOutcome[] {
  const [rec, rep] = [collapsed(recorded), collapsed(replayed)];
  const events: Finding[] = [];
  const values: Finding[] = [];
  let common = 0;
  while (common < rec.length && common < rep.length && rec[common]?.name === rep[common]?.name) common++;
  if (common < rec.length || common < rep.length) {
    const [was, is] = [rec[common]?.name ?? 'the end of the stream', rep[common]?.name ?? 'the end of the stream'];
    events.push({
      check: 'parity.stream.events',
      path: `events[${common}]`,
      recorded: was,
      replayed: is,
      message: `event ${common} (a run of one delta event counted once) is ${was} in the recording and ${is} in the replay`,
      detail: `recorded: ${sequence(rec)}; replayed: ${sequence(rep)}`,
    });
  }
  for (let i = 0; i < common; i++) {
    const diff = diffJson(rec[i]?.data, rep[i]?.data, { ...options, root: `events[${i}]`, shapeCheck: 'parity.stream.events', valuesCheck: 'parity.stream.values' });
    const name = rec[i]?.name ?? '';
    events.push(...diff.shape.map((f) => ({ ...f, message: `${name}: ${f.message}` })));
    values.push(...diff.values.map((f) => ({ ...f, message: `${name}: ${f.message}` })));
  }
  return [
    { check: 'parity.stream.events', findings: events },
    { check: 'parity.stream.values', findings: values },
  ];
}
