import { CALLBACKS, CANCEL, GET, LIST, MESSAGES, RESPONSES, SUBMIT, TASK_ANSWERS, TEXT } from './endpoints.ts';
import type { Endpoint, RuleMeta } from './endpoints.ts';

// The rules of behaviour (src/observed CHECKS) in the coverage table: the answers each judges and what of them,
// beside what it holds. `control` marks the few the suite can feed only through the emulator's control API: the
// account's balance has no public endpoint, and the suite provokes a 429 only with a key the control API limits,
// fails a callback delivery only where it moves the clock, and cuts a stream only by the emulator's scenario
// (src/conformance/behaviour.ts skips each of these rules, saying so, when the run gave it nothing to judge).

const tasks = (behaviour: string): RuleMeta => ({ endpoints: TASK_ANSWERS, behaviour });
const text = (behaviour: string): RuleMeta => ({ endpoints: TEXT, behaviour });
const callbacks = (behaviour: string, also: readonly Endpoint[] = []): RuleMeta => ({ endpoints: [...CALLBACKS, ...also], behaviour });
const list = (behaviour: string): RuleMeta => ({ endpoints: [LIST], behaviour });

export const RULE_META: Readonly<Record<string, RuleMeta>> = {
  'lifecycle.status.forward-only': tasks('the status across the reads of a task'),
  'lifecycle.terminal.unchanged': tasks('reads of a task after its end'),
  'lifecycle.created-at.unchanged': tasks('created_at across the reads of a task'),
  'lifecycle.times.ordered': tasks('the three times of each read'),
  'lifecycle.times.started': tasks('started_at in each status'),
  'lifecycle.times.finished': tasks('finished_at in each status'),
  'lifecycle.output.success-only': tasks('output in each status'),
  'lifecycle.error.failure-only': tasks('error in each status'),
  'lifecycle.read.after-start': tasks('a read after the task started'),
  'wire.time.beijing': tasks('the offset of task times'),
  'lifecycle.submit.queued': { endpoints: [SUBMIT], behaviour: 'the status a submission answers' },

  'billing.freeze.on-submit': { endpoints: [SUBMIT], behaviour: 'the freeze a submission answers, by the price rule' },
  'billing.freeze.unchanged': tasks('points.frozen across the reads of a task'),
  'billing.points.open-until-terminal': tasks('points before the end'),
  'billing.points.settled': tasks('the points of an ended task'),
  'billing.charge.price': { endpoints: [GET, LIST], behaviour: "a succeeded task's charge, by the price rule" },
  'billing.balance.moves': { endpoints: [SUBMIT, CANCEL], behaviour: "the account's balance around a submission, a replay and a cancel", control: true },

  'tasks.idempotency.same-answer': { endpoints: [SUBMIT], behaviour: 'replays under one Idempotency-Key' },
  'tasks.idempotency.conflict-refused': { endpoints: [SUBMIT], behaviour: 'other parameters under one Idempotency-Key' },
  'tasks.list.limit': list('the size of a page'),
  'tasks.list.newest-first': list('the order down a page and across a walk'),
  'tasks.list.filter': list('items under a status or model filter'),
  'tasks.list.no-repeat': list('ids across the pages of a walk'),
  'tasks.list.no-gap': list('known tasks between the pages of a walk'),
  'tasks.list.item-as-get': { endpoints: [LIST, GET], behaviour: 'a list item against the task read' },

  'text.id.own-prefixed': text('the id of each call and stream chunk'),
  'text.usage.positive': text('the usage of each call'),
  'text.max-tokens.respected': text('output tokens against the maximum asked for'),
  'text.truncation.at-max': text('an answer that says it was cut'),
  'text.stream.usage': text("a stream's final usage against its text"),
  'text.stop-reason.documented': text('the ending of each call, whole and streamed'),
  'text.stream.error-event': { endpoints: TEXT, behaviour: 'a stream ended by an error event', control: true },

  'callbacks.terminal.only': callbacks('the type of each callback'),
  'callbacks.once-per-task': callbacks('the webhook-id of the deliveries of a task'),
  'callbacks.signature.verifies': callbacks('webhook-signature of each delivery'),
  'callbacks.timestamp.fresh': callbacks('webhook-timestamp against the receipt'),
  'callbacks.envelope.after-finish': callbacks("the envelope's timestamp against finished_at"),
  'callbacks.data.as-get': callbacks('data against the task read', [GET]),
  'callbacks.get.terminal-on-arrival': callbacks('a read once the callback came', [GET]),
  'callbacks.request.json': callbacks('the Content-Type and body of each delivery'),
  'callbacks.request.user-agent': callbacks('the User-Agent of each delivery'),
  'callbacks.timestamp.seconds': callbacks('the unit of webhook-timestamp'),
  'callbacks.data.task-object': callbacks('the data of each callback'),
  'callbacks.retry.schedule': { ...callbacks('the times of the retries of a failed delivery'), control: true },

  'tasks.list.full-page': list('a page with has_more true'),
  'files.result.record-fields': { endpoints: [GET, LIST], behaviour: 'output.files of a succeeded video or avatar' },
  'files.result.text-only-empty': { endpoints: [GET, LIST], behaviour: 'output.files of a succeeded notes task' },

  'billing.refusal.changes-nothing': { endpoints: [SUBMIT, CANCEL], behaviour: "the account's balance around each refusal", control: true },
  'tasks.refusal.creates-nothing': { endpoints: [SUBMIT, GET, LIST], behaviour: 'the tasks after a refused submission or a replay' },
  'tasks.refusal.leaves-tasks': { endpoints: [CANCEL, SUBMIT, GET], behaviour: 'the task a refused cancel or a conflicting key names' },
  'tasks.cancel.held-to-reads': { endpoints: [CANCEL, GET, LIST], behaviour: 'reads after a cancel answered 200' },
  'tasks.submit.held-to-reads': { endpoints: TASK_ANSWERS, behaviour: 'reads after a submission answered 200' },

  'wire.retry-after.rate-limited': { endpoints: [...TASK_ANSWERS, ...TEXT], behaviour: 'the headers of a 429', control: true },
  'text.stream.no-buffering': text('the headers of an event stream'),
  'tasks.cancel.conflict-code': { endpoints: [CANCEL], behaviour: 'the code of a cancel answered 409' },
  'tasks.not-found.code': { endpoints: [GET, CANCEL], behaviour: "the code of a 404 on a task's own path" },
  'text.bad-request.non-json': text('a text body that is not a JSON object'),
  'text.responses.unsupported-refused': { endpoints: [RESPONSES], behaviour: 'previous_response_id or tools' },
  'text.messages.x-api-key': { endpoints: [MESSAGES], behaviour: 'the key in x-api-key' },
  'tasks.cancel.terminal-conflict': { endpoints: [CANCEL], behaviour: 'cancel of a task read after its end' },
  'tasks.isolation.observed': tasks("the suite's tasks through another account's key"),
  'tasks.list.newest-first.same-second': list('tasks of one second, down a page and across a walk'),
  'tasks.list.no-skip': list('tasks submitted before a page was read'),
};
