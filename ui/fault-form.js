// The Faults panel's form: any rule POST /_emulator/faults takes, one at a time. It shows the chosen kind's own
// fields and the match fields of what that kind takes (requests or callbacks), and checks nothing itself
// (novalidate): the control API validates the rule, and its refusal is said in the header as any other.
import { $ } from './dom.js';

/** The kinds injected into callbacks rather than /v1 requests (openapi/admin.yaml, `Fault`). */
export const CALLBACK_KINDS = new Set(['delay', 'duplicate', 'out_of_order', 'forged_signature']);

/** Each kind's own fields: the rule's field, the input's id, and how it is read. */
const KIND_FIELDS = {
  error: [
    ['code', 'fault-code', 'text'],
    ['retry_after', 'fault-retry-after', 'number'],
  ],
  latency: [
    ['ms', 'fault-ms', 'number'],
    ['between_chunks', 'fault-between', 'check'],
  ],
  cut: [['after_chunks', 'fault-after-chunks', 'number']],
  trickle: [['bytes_per_second', 'fault-bytes-per-second', 'number']],
  delay: [['seconds', 'fault-seconds', 'number']],
};

/** The match fields of a request fault's rule and of a callback fault's. */
const MATCH_FIELDS = {
  requests: [
    ['method', 'fault-method'],
    ['path', 'fault-path'],
    ['model', 'fault-model'],
    ['key', 'fault-key'],
    ['account', 'fault-account'],
  ],
  callbacks: [
    ['event', 'fault-event'],
    ['account', 'fault-account'],
  ],
};

/** What the chosen kind does, under the kind's select. */
const ABOUT = {
  error: 'An error answer in the endpoint’s shape; nothing is done (no task, no points frozen).',
  latency: 'Real milliseconds before the answer (its first byte for a stream), or between a stream’s events.',
  reset: 'The connection is dropped once the request is read, with no answer.',
  cut: 'A stream ends after this many events, without its error event; any other answer is cut half-way.',
  trickle: 'The answer goes out this many bytes a second.',
  delay: 'A callback’s first attempt waits this many virtual seconds.',
  duplicate: 'A callback is delivered twice, under the same webhook-id.',
  out_of_order: 'A later task’s callback is delivered before an earlier one’s, where both are due.',
  forged_signature: 'An extra delivery with a wrong signature, and its own webhook-id, goes before the real one.',
};

const takesOf = (kind) => (CALLBACK_KINDS.has(kind) ? 'callbacks' : 'requests');

/** An input's value as the rule's field: undefined when left empty, so the API tells what a kind lacks. */
function valueOf(id, how) {
  const input = $(id);
  if (how === 'check') return input.checked ? true : undefined;
  const text = input.value.trim();
  if (text === '') return undefined;
  return how === 'number' ? Number(text) : text;
}

/** The rule the form describes, as POST /_emulator/faults takes it. */
export function ruleOfForm() {
  const kind = $('fault-kind').value;
  const fault = { kind };
  for (const [field, id, how] of KIND_FIELDS[kind] ?? []) {
    const value = valueOf(id, how);
    if (value !== undefined) fault[field] = value;
  }
  const match = {};
  for (const [field, id] of MATCH_FIELDS[takesOf(kind)]) {
    const value = valueOf(id, 'text');
    if (value !== undefined) match[field] = value;
  }
  const rule = { match, fault };
  const times = valueOf('fault-times', 'number');
  if (times !== undefined) rule.times = times;
  const chance = valueOf('fault-chance', 'number');
  if (chance !== undefined) rule.probability = chance / 100;
  return rule;
}

/** Shows the chosen kind's fields and the match fields of what it takes, and says which it takes. */
function showFields() {
  const kind = $('fault-kind').value;
  const takes = takesOf(kind);
  const form = $('fault-form');
  for (const field of form.querySelectorAll('[data-kinds]')) field.hidden = !field.dataset.kinds.split(' ').includes(kind);
  for (const field of form.querySelectorAll('[data-takes]')) field.hidden = field.dataset.takes !== takes;
  $('fault-match-legend').textContent = takes === 'callbacks' ? 'Which callbacks' : 'Which requests';
  $('fault-times-label').textContent = takes === 'callbacks' ? 'Next N callbacks' : 'Next N requests';
  $('fault-about').textContent = ABOUT[kind] ?? '';
}

/** Wires the form: the fields follow the kind, and a submit posts the rule. */
export function startFaultForm({ api, actions }) {
  $('fault-kind').addEventListener('change', showFields);
  showFields();
  $('fault-form').addEventListener('submit', (event) => {
    event.preventDefault();
    actions.act(event.submitter ?? null, async () => {
      const { data } = await api('POST', '/_emulator/faults', { rules: [ruleOfForm()] });
      return `Fault rule ${data.map((r) => r.id).join(', ')} added.`;
    });
  });
}
