// The overview atop the dashboard: the world shown in a few facts, and what a QA engineer looks at first, counted
// (tasks by state and by model, callback messages failed and pending, the last refused or failed calls), each
// count a link that opens its list filtered that way.
import { listReader } from './api.js';
import { clockText } from './clock.js';
import { $, duration, fact, h, renderInto, time } from './dom.js';
import { callLine } from './records.js';
import { trialOutcome } from './labels.js';
import { reveal } from './links.js';

/** A store's size on disk, in words. */
const bytesText = (n) => (n === 0 ? 'in memory' : n < 10240 ? `${n} bytes on disk` : n < 10485760 ? `${Math.round(n / 1024)} KB on disk` : `${Math.round(n / 1048576)} MB on disk`);

/**
 * The counts cost four reads (each sending the versions it holds, so a quiet one carries no rows): made on every
 * few polls only, and on the first poll of a world shown.
 */
const COUNTS_EVERY = 3;
/** Tasks counted: the newest this many (the control API pages at 1000 at most). */
const COUNTED_TASKS = 1000;
/** Call records looked through for the last errors, newest first. */
const SCANNED_RECORDS = 100;
const LAST_ERRORS = 5;
const TASK_STATES = ['queued', 'processing', 'succeeded', 'failed', 'canceled'];
const DELIVERIES = '/_emulator/webhooks/deliveries';

/** A refused or failed call: answered 400 or above, or dropped by a reset fault. */
const isError = (record) => record.status >= 400 || record.injected_fault?.kind === 'reset';

/**
 * The world shown, in a few facts: a session's name, id, clock, sizes, when it was made and last used, and how long
 * it lasts unused (GET /_emulator/sessions/{id}, as `state.overview` holds it); for the default world, its clock as
 * read with the lists and how many sessions are beside it. Called on every poll. The page's own calls are no use of
 * a session (api.js), so its last use and expiry are the clients' and stand still while only the page reads it.
 */
export function renderOverview(state, clock) {
  const s = state.overview;
  const beside = state.ownSession ? null : state.sessions.length;
  renderInto($('overview-facts'), JSON.stringify([s, s ? null : clock, beside]), () =>
    s
      ? [
          fact('World', s.name),
          fact('Session', h('code', {}, s.id)),
          fact('Clock', [`${s.clock.mode}, ${clockText(s.clock)}, now `, time(s.clock.now)]),
          fact('Accounts', String(s.size.accounts)),
          fact('Tasks', String(s.size.tasks)),
          fact('Calls', String(s.size.calls)),
          fact('Callback messages', String(s.size.deliveries)),
          fact('Store', bytesText(s.size.bytes)),
          fact('Created', time(s.created_at)),
          fact('Last used by a client', time(s.last_used_at)),
          fact('Time-to-live', s.ttl_seconds === null ? 'none: it lasts until deleted' : `${duration(s.ttl_seconds)} without a client's request (this page's own do not count)`),
          fact('Expires', s.expires_at === null ? 'never' : time(s.expires_at)),
        ]
      : [
          fact('World', 'Default world'),
          fact('Reached by', "the emulator's own keys, and its admin token naming no session"),
          fact('Clock', [`${clock.mode}, ${clockText(clock)}, now `, time(clock.now)]),
          beside === null ? null : fact('Sessions beside it', beside === 0 ? 'none' : `${beside} (choose one in the World picker)`),
        ],
  );
}

/** Sets a filter form's fields (all but its page size) to `values`, the others emptied, as if the user had. */
function setFilters(formId, values) {
  for (const field of $(formId).elements) if (field.name && field.name !== 'limit') field.value = values[field.name] ?? '';
}

/**
 * The counts of the overview: `read(tick)` on every poll (it reads on every few only, and resolves null between),
 * `render(read)` with what it read. `app.records` is used when rendering: the parts are made in any order.
 */
export function createCounts(app) {
  const { state, api, refresh } = app;
  let readers = null;
  let epoch = -1;

  async function read(tick) {
    // Another world shown: the versions held are another world's.
    if (epoch !== state.epoch) {
      epoch = state.epoch;
      readers = {
        tasks: listReader(api, '/_emulator/tasks'),
        failed: listReader(api, DELIVERIES),
        pending: listReader(api, DELIVERIES),
        records: listReader(api, '/_emulator/records'),
      };
    } else if (tick % COUNTS_EVERY !== 0) return null;
    const [tasks, failed, pending, records] = await Promise.all([
      readers.tasks({ limit: COUNTED_TASKS }),
      readers.failed({ status: 'failed' }),
      readers.pending({ status: 'pending' }),
      readers.records({ limit: SCANNED_RECORDS }),
    ]);
    return { tasks, failed, pending, records };
  }

  /** Opens a list filtered as `values` say, from its first page, its heading at the top. */
  const open = (list, formId, headingId, values) => (event) => {
    event.preventDefault();
    setFilters(formId, values);
    state.pages[list] = 1;
    refresh();
    reveal(headingId, true);
  };
  const showTasks = (values) => open('tasks', 'task-filters', 'tasks-heading', values);
  const showCallbacks = (values) => open('callbacks', 'callback-filters', 'callbacks-heading', values);
  const showRecords = (values) => open('records', 'record-filters', 'records-heading', values);

  /** A count as a link: `3 failed`, its href naming the list it opens. */
  const countLink = (n, label, href, onClick, title) =>
    h('li', {}, h('a', { href, onClick, title, dataset: { focus: `count-${href}-${label}` } }, h('span', { className: 'count' }, String(n)), ` ${label}`));
  const group = (name, items, note) =>
    h('div', { className: 'count-group' }, h('h3', {}, name), h('ul', { className: 'counts', 'aria-label': name }, items), note ? h('p', { className: 'hint' }, note) : null);

  function render(read) {
    if (!read) return;
    const tasks = read.tasks.rows.map((row) => row.task);
    const byState = TASK_STATES.map((status) => [status, tasks.filter((t) => t.status === status).length]);
    const models = [...new Set(tasks.map((t) => t.model))].sort().map((model) => [model, tasks.filter((t) => t.model === model).length]);
    // The emulator lists a forged or stale delivery the receiver refused as failed: it did what it should.
    const refused = read.failed.rows.filter((d) => trialOutcome(d)?.outcome === 'refused').length;
    const failed = read.failed.rows.length - refused;
    const pending = read.pending.rows;
    const retrying = pending.filter((d) => d.attempts.length > 0).length;
    const errors = read.records.rows.filter(isError).slice(0, LAST_ERRORS);
    const more = read.tasks.has_more;
    const signature = JSON.stringify([byState, models, failed, refused, pending.length, retrying, errors.map((r) => r.request_id), more]);
    renderInto($('overview-counts'), signature, () => [
      group(
        'Tasks by state',
        byState.map(([status, n]) => countLink(n, status, '#tasks', showTasks({ status }), `Show the ${status} tasks`)),
        [tasks.length === 0 ? 'No tasks yet.' : `${tasks.length} in all`, more ? `: the newest ${COUNTED_TASKS} counted.` : '.'].join(''),
      ),
      group(
        'Tasks by model',
        models.length === 0 ? h('li', { className: 'hint' }, 'none yet') : models.map(([model, n]) => countLink(n, model, '#tasks', showTasks({ model }), `Show the tasks of ${model}`)),
      ),
      group(
        'Callbacks',
        [
          countLink(failed, 'failed', '#callbacks', showCallbacks({ status: 'failed' }), 'Show the messages whose every automatic attempt failed'),
          countLink(pending.length, 'pending', '#callbacks', showCallbacks({ status: 'pending' }), 'Show the messages still to be delivered'),
        ],
        [
          retrying > 0 ? `${retrying} pending after a failed attempt.` : '',
          refused > 0 ? `${refused} forged or stale ${refused === 1 ? 'delivery' : 'deliveries'} refused, as ${refused === 1 ? 'it' : 'they'} should: not counted as failed.` : '',
        ].join(' ').trim() || null,
      ),
      h(
        'div',
        { className: 'count-group last-errors' },
        h('h3', {}, 'Last errors'),
        errors.length === 0
          ? h('p', { className: 'hint' }, `None among the last ${SCANNED_RECORDS} calls.`)
          : h(
              'ol',
              { className: 'errors', 'aria-label': 'Last errors' },
              errors.map((r) => {
                const filter = r.error_code ? { error_code: r.error_code } : { status: String(r.status) };
                const label = r.injected_fault?.kind === 'reset' ? 'reset' : `${r.status}${r.error_code ? ` ${r.error_code}` : ''}`;
                return h(
                  'li',
                  {},
                  time(r.at),
                  ' ',
                  h('a', { href: '#records', onClick: showRecords(filter), title: `Show every call ${r.error_code ? `refused with ${r.error_code}` : `answered ${r.status}`}`, dataset: { focus: `error-${r.request_id}` } }, label),
                  ` ${callLine(r)} `,
                  app.records.button(r.request_id, 'overview'),
                );
              }),
            ),
      ),
    ]);
  }

  return { read, render };
}
