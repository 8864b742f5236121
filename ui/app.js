// The emulator's dashboard: plain ES modules, no build step, no library. It reads and steers the control API
// under /_emulator with the admin token the user signs in with (kept in this tab's sessionStorage only), and
// polls every POLL_MS, reading only what changed: lists send the versions of the rows the page holds, the
// ledger asks for the entries after the newest it has. Everything from the emulator is written as text.
/* global document, sessionStorage, setTimeout, clearTimeout, FormData, location, history, navigator, window, ResizeObserver */

import { ApiFailure, createApi, listReader, query, traffic } from './api.js';
import { curlFor, redactKey } from './curl.js';
import {
  $,
  chooser,
  duration,
  emptyRow,
  fact,
  h,
  invalidate,
  jsonBlock,
  pager,
  plainTime,
  prettyJson,
  renderInto,
  seconds,
  statusBadge,
  time,
} from './dom.js';
import { scenarioKind, scenarioOutcome, scenarioTiming } from './scenarios.js';

const TOKEN_KEY = 'svc-emulator-admin-token';
const POLL_MS = 1500;
const SCENARIO_EVERY = 10; // polls between scenario reloads: they change only when someone loads new ones
const LEDGER_CATCH_UP = 1000; // new entries read per poll at most; beyond it the ledger jumps to the newest
const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

const state = {
  token: null,
  timer: null,
  ticks: 0,
  clockNow: null,
  lastError: '',
  pages: { accounts: 1, tasks: 1, callbacks: 1, records: 1 },
  accountIds: new Set(),
  models: new Set(),
  ledger: { account: null, entries: [], count: 0 },
  // The chosen task, call record and callback message (see DETAILS), each with what was last read of it (null:
  // nothing yet, or gone) and the version its row had then in the list shown.
  task: { id: null, item: null, version: null },
  record: { id: null, item: null, version: null },
  delivery: { id: null, item: null, version: null },
};

const api = createApi(() => state.token);
const readers = {
  accounts: listReader(api, '/_emulator/accounts'),
  tasks: listReader(api, '/_emulator/tasks'),
  records: listReader(api, '/_emulator/records'),
  callbacks: listReader(api, '/_emulator/webhooks/deliveries'),
  taskDeliveries: listReader(api, '/_emulator/webhooks/deliveries'),
};

// ---------------------------------------------------------------------------------------------------------------
// Messages: the sticky header's "Last action" line

function announce(message, isError = false) {
  const status = $('status');
  status.textContent = message;
  status.classList.toggle('error', isError);
  status.classList.toggle('ok', !isError);
}

function reportPollError(error) {
  const message = `Could not read the emulator: ${error.message}`;
  if (message !== state.lastError) announce(message, true);
  state.lastError = message;
}

// ---------------------------------------------------------------------------------------------------------------
// Signing in and out

async function signIn(token, { quiet = false } = {}) {
  state.token = token;
  try {
    await api('GET', '/_emulator/clock');
  } catch (error) {
    state.token = null;
    if (error instanceof ApiFailure && error.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      if (!quiet) announce('The emulator refused that token. Check the admin token it was started with.', true);
    } else {
      announce(`Could not reach the emulator: ${error.message}`, true);
    }
    return false;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  for (const id of ['login', 'signed-out']) $(id).hidden = true;
  for (const id of ['session', 'dashboard', 'nav', 'clock']) $(id).hidden = false;
  state.ticks = 0;
  openFromHash();
  await refresh();
  if (!quiet) announce('Signed in.');
  poll();
  return true;
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = null;
  clearTimeout(state.timer);
  for (const id of ['login', 'signed-out']) $(id).hidden = false;
  for (const id of ['session', 'dashboard', 'nav', 'clock']) $(id).hidden = true;
  announce(message, message !== 'Signed out.');
  $('token').focus();
}

// ---------------------------------------------------------------------------------------------------------------
// Polling

function poll() {
  clearTimeout(state.timer);
  state.timer = setTimeout(async () => {
    if (document.visibilityState !== 'hidden') await refresh();
    if (state.token) poll();
  }, POLL_MS);
}

let running = null;
let rerun = false;

/** One refresh at a time; a call during a refresh runs one more right after it, with the newest filters. */
function refresh() {
  if (running) {
    rerun = true;
    return running;
  }
  running = (async () => {
    try {
      do {
        rerun = false;
        await refreshOnce();
      } while (rerun && state.token);
    } finally {
      running = null;
    }
  })();
  return running;
}

async function refreshOnce() {
  if (!state.token) return;
  const before = { ...traffic };
  const filters = {
    accounts: formValues($('account-filters')),
    tasks: formValues($('task-filters')),
    records: formValues($('record-filters')),
    callbacks: formValues($('callback-filters')),
  };
  const wantScenarios = state.ticks++ % SCENARIO_EVERY === 0;
  try {
    const [clock, accounts, tasks, records, callbacks, scenarios] = await Promise.all([
      api('GET', '/_emulator/clock'),
      readers.accounts({ ...filters.accounts, page: state.pages.accounts }),
      readers.tasks({ ...filters.tasks, page: state.pages.tasks }),
      readers.records({ ...filters.records, page: state.pages.records }),
      readers.callbacks({ order: 'attention', ...filters.callbacks, page: state.pages.callbacks }),
      wantScenarios ? api('GET', '/_emulator/scenarios') : null,
    ]);
    // A page past the end (after a reset, or a narrower filter) goes back to the first.
    const lists = { accounts, tasks, records, callbacks };
    const emptied = Object.entries(lists).filter(([name, list]) => list.rows.length === 0 && state.pages[name] > 1);
    if (emptied.length > 0) {
      for (const [name] of emptied) state.pages[name] = 1;
      rerun = true;
      return;
    }
    renderClock(clock);
    renderAccounts(accounts);
    for (const entry of tasks.rows) state.models.add(entry.task.model);
    for (const record of records.rows) if (record.model) state.models.add(record.model);
    renderDatalists();
    renderTasks(tasks, filters.tasks);
    renderRecords(records);
    renderCallbacks(callbacks);
    if (scenarios) renderScenarios(scenarios.data);
    await Promise.all([refreshLedger(), refreshTask(tasks), refreshRecord(records), refreshDelivery(callbacks)]);
    if (state.lastError) announce('Connected again.');
    state.lastError = '';
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) signOut('The emulator no longer accepts the token; sign in again.');
    else if (error instanceof ApiFailure && error.status === 422) reportPollError(new Error(`a filter is not valid: ${error.message}`));
    else reportPollError(error);
  }
  const bytes = traffic.bytes - before.bytes;
  $('traffic').textContent = `The last refresh read ${bytes < 10240 ? `${bytes} bytes` : `${Math.round(bytes / 1024)} KB`} in ${traffic.requests - before.requests} requests.`;
}

function formValues(form) {
  const values = {};
  for (const [name, value] of new FormData(form)) values[name] = String(value).trim();
  return values;
}

// ---------------------------------------------------------------------------------------------------------------
// Deep links: #task=T…, #record=req_…, #delivery=msg_…, #account=acct_… open that item; choosing one updates it.

const CHOOSERS = { task: chooseTask, record: chooseRecord, delivery: chooseDelivery, account: chooseAccount };

function linkOf(hash) {
  const match = /^#(task|record|delivery|account)=(.+)$/.exec(hash);
  if (!match) return null;
  try {
    return { kind: match[1], id: decodeURIComponent(match[2]) };
  } catch {
    return null;
  }
}

/** Opens what the address names, if it names something. */
function openFromHash() {
  const link = linkOf(location.hash);
  if (link && state.token) CHOOSERS[link.kind](link.id, { fromLink: true });
}

/** Puts the chosen item in the address (a new history entry, so Back goes to the item before). */
function setLink(kind, id) {
  const hash = `#${kind}=${encodeURIComponent(id)}`;
  if (location.hash !== hash) history.pushState(null, '', hash);
}

/**
 * Brings a detail into view: its heading takes the focus (which scrolls only if it is out of sight); opened by a
 * link, the heading goes to the top, just below the sticky header.
 */
function reveal(headingId, fromLink = false) {
  const heading = $(headingId);
  heading.focus({ preventScroll: fromLink });
  if (fromLink) heading.scrollIntoView({ block: 'start' });
}

// Whatever scrolls into view (a focused heading, a section link) stops below the sticky header, however tall.
new ResizeObserver(() => {
  document.documentElement.style.scrollPaddingTop = `${$('top').offsetHeight + 8}px`;
}).observe($('top'));

// ---------------------------------------------------------------------------------------------------------------
// Details: the chosen task, call record or callback message below its list; each kind's page elements are
// <kind>-heading, <kind>-none (the hint shown until one is chosen) and <kind>-detail.

/**
 * Each detail: its heading's word, the lists that mark the chosen item, the id of a list's row, and how the item
 * is read (null when it is gone).
 */
const DETAILS = {
  task: {
    title: 'Task',
    lists: ['tasks-body', 'ledger-body', 'records-body', 'callbacks-body'],
    keyOf: (entry) => entry.task.id,
    read: (id) => readOrNull(`/_emulator/tasks/${encodeURIComponent(id)}`),
  },
  record: { title: 'Call', lists: ['records-body'], keyOf: (r) => r.request_id, read: readRecord },
  delivery: {
    title: 'Message',
    lists: ['callbacks-body', 'deliveries'],
    keyOf: (d) => d.id,
    read: (id) => readOrNull(`/_emulator/webhooks/deliveries/${encodeURIComponent(id)}`),
  },
};

/** Opens an item in its detail, names it in the address, and reads it at once. */
function choose(kind, id, { fromLink = false } = {}) {
  if (state[kind].id !== id) state[kind] = { id, item: null, version: null };
  const { title, lists } = DETAILS[kind];
  $(`${kind}-heading`).textContent = `${title} ${id}`;
  $(`${kind}-none`).hidden = true;
  $(`${kind}-detail`).hidden = false;
  for (const list of lists) invalidate($(list));
  setLink(kind, id);
  reveal(`${kind}-heading`, fromLink);
  refresh();
}

/**
 * The chosen item of a detail as it is now. It is read again only when its row in `list` changed version, or the
 * page shown does not hold it, so a quiet poll reads none. Undefined when none is chosen, or another was chosen
 * meanwhile; null when it is gone.
 */
async function readChosen(kind, list) {
  const { id, item: held, version: heldVersion } = state[kind];
  if (!id) return undefined;
  const { keyOf, read } = DETAILS[kind];
  const i = list.rows.findIndex((row) => keyOf(row) === id);
  const version = i === -1 ? null : list.versions[i];
  const item = held && version !== null && version === heldVersion ? held : await read(id);
  if (state[kind].id !== id) return undefined;
  state[kind] = { id, item, version };
  return item;
}

/** A single item of the control API, or null when it is gone (a reset, or a link to something that never was). */
async function readOrNull(path) {
  try {
    return await api('GET', path);
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 404) return null;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Clock (in the sticky header)

function renderClock(clock) {
  state.clockNow = clock.now;
  renderInto($('clock-now'), clock.now, () => time(clock.now));
  $('clock-mode').textContent = clock.mode;
  $('clock-speed').textContent = clock.mode === 'real' ? `${clock.speed}× wall time` : 'stands still until advanced';
  // Only a real clock has a speed to set.
  $('clock-speed-form').hidden = clock.mode !== 'real';
}

async function advanceClock(secondsToAdvance, button) {
  await act(button, async () => {
    const result = await api('POST', '/_emulator/clock/advance', { seconds: secondsToAdvance });
    return `Clock advanced ${duration(secondsToAdvance)} to ${plainTime(result.now)}.`;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Accounts and ledger

function renderAccounts(list) {
  const accounts = list.rows;
  for (const a of accounts) state.accountIds.add(a.id);
  if (!state.ledger.account && accounts[0]) state.ledger.account = accounts[0].id;
  $('accounts-caption').textContent = `Accounts and their points, oldest first: ${accounts.length} on page ${list.page}`;
  renderInto($('accounts-body'), JSON.stringify([list.versions, state.ledger.account]), () =>
    accounts.length === 0
      ? emptyRow(6, 'No accounts.')
      : accounts.map((a) =>
          h(
            'tr',
            { className: a.id === state.ledger.account ? 'chosen' : undefined },
            h('th', { scope: 'row' }, h('code', {}, a.id)),
            h('td', { className: 'num' }, a.available),
            h('td', { className: 'num' }, a.frozen),
            h('td', { className: 'num' }, a.charged),
            h('td', { className: 'url' }, a.webhook_url ?? '–'),
            h(
              'td',
              {},
              h(
                'button',
                {
                  type: 'button',
                  'aria-pressed': String(a.id === state.ledger.account),
                  dataset: { focus: `ledger-${a.id}` },
                  onClick: () => chooseAccount(a.id),
                },
                `Ledger of ${a.id}`,
              ),
            ),
          ),
        ),
  );
  listPager('accounts', list, 'Previous accounts', 'Next accounts');
}

function chooseAccount(id, { fromLink = false } = {}) {
  if (state.ledger.account !== id) state.ledger = { account: id, entries: [], count: 0 };
  invalidate($('accounts-body'));
  setLink('account', id);
  if (fromLink) reveal('ledger-heading', true);
  refresh();
}

const ledgerPath = (id, params) => `/_emulator/accounts/${encodeURIComponent(id)}/ledger${query(params)}`;
const entryNumber = (e) => e.n ?? e.id;

/**
 * The chosen account's ledger, read from its end: at first the newest entries, then on each poll only those
 * after the newest held (asking from that one, which must come back the same: if not, a reset or an import
 * replaced the ledger, and it is read afresh).
 */
async function refreshLedger() {
  const ledger = state.ledger;
  const id = ledger.account;
  if (!id) {
    $('ledger-caption').textContent = 'No account chosen';
    renderInto($('ledger-body'), 'none', () => emptyRow(5, 'No account.'));
    return;
  }
  const size = Number($('ledger-limit').value) || 50;
  let entries = ledger.entries;
  let count = ledger.count;
  const newest = entries.at(-1);
  try {
    if (newest) {
      const page = await api('GET', ledgerPath(id, { after: entryNumber(newest) - 1, limit: LEDGER_CATCH_UP }));
      if (page.data[0]?.id === newest.id && !page.has_more) entries = [...entries, ...page.data.slice(1)];
      else entries = [];
      count = page.count;
    }
    if (entries.length === 0) {
      count = (await api('GET', ledgerPath(id, { limit: 0 }))).count;
      if (count > 0) entries = (await api('GET', ledgerPath(id, { after: Math.max(0, count - size), limit: size }))).data;
    }
  } catch (error) {
    if (!(error instanceof ApiFailure && error.status === 404)) throw error;
    // A linked account that never was, or one a reset took away.
    if (state.ledger !== ledger) return;
    state.ledger = { account: id, entries: [], count: 0 };
    $('ledger-caption').textContent = `No account ${id} (a reset, or a wrong link?)`;
    $('ledger-older').hidden = true;
    renderInto($('ledger-body'), `gone ${id}`, () => emptyRow(5, 'No entries.'));
    return;
  }
  // Anything that replaced the ledger meanwhile (another account, other filters, older entries, a newer poll)
  // knows better than this read: a stale answer must not bring back what a filter change dropped.
  if (state.ledger !== ledger) return;
  state.ledger = { account: id, entries, count };
  renderLedger();
}

async function loadOlderEntries() {
  const { account, entries } = state.ledger;
  const oldest = entries[0];
  if (!account || !oldest || entryNumber(oldest) <= 1) return;
  const size = Number($('ledger-limit').value) || 50;
  const after = Math.max(0, entryNumber(oldest) - 1 - size);
  const page = await api('GET', ledgerPath(account, { after, limit: entryNumber(oldest) - 1 - after }));
  if (state.ledger.account !== account || state.ledger.entries[0] !== oldest) return;
  state.ledger = { ...state.ledger, entries: [...page.data, ...state.ledger.entries] };
  renderLedger();
}

function renderLedger() {
  const { account, entries, count } = state.ledger;
  $('ledger-caption').textContent =
    `Ledger of ${account}: ${count} entries, newest first` + (entries.length < count ? ` (the newest ${entries.length} shown)` : '');
  $('ledger-older').hidden = entries.length === 0 || entryNumber(entries[0]) <= 1;
  renderInto($('ledger-body'), JSON.stringify([account, count, entries.length, entries.at(-1)?.id, state.task.id]), () =>
    entries.length === 0
      ? emptyRow(5, 'No entries.')
      : [...entries].reverse().map((e) =>
          h(
            'tr',
            { className: `kind-${e.kind}` },
            h('td', { className: 'num' }, String(entryNumber(e))),
            h('td', {}, time(e.at)),
            h('td', {}, e.kind),
            h('td', { className: 'num' }, e.kind === 'refund' || e.kind === 'fund' ? `+${e.points}` : e.points),
            h('td', {}, e.task_id ? taskButton(e.task_id, `ledger-${e.id}`) : '–'),
          ),
        ),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Tasks

function renderDatalists() {
  const models = [...state.models].sort();
  renderInto($('models'), models.join(), () => models.map((model) => h('option', { value: model })));
  const accounts = [...state.accountIds].sort();
  renderInto($('account-ids'), accounts.join(), () => accounts.map((id) => h('option', { value: id })));
}

function taskButton(id, where) {
  return chooser(id, { pressed: id === state.task.id, focus: `${where}-task-${id}`, onChoose: () => chooseTask(id) });
}

function compactTimeline(task) {
  const short = (iso) => (iso ? iso.slice(11, 19) : '…');
  const parts = [short(task.created_at), short(task.started_at)];
  if (task.finished_at || !task.started_at) parts.push(short(task.finished_at));
  return h('span', { className: 'timeline-compact' }, parts.join(' → '));
}

const pointsText = (p) => `${p.frozen} / ${p.charged} / ${p.refunded}`;

function renderTasks(list, filters) {
  const entries = list.rows;
  const filtered = [filters.account && `account ${filters.account}`, filters.model && `model ${filters.model}`, filters.status && `status ${filters.status}`].filter(Boolean);
  $('tasks-caption').textContent =
    `Tasks, newest first: ${entries.length} on page ${list.page}` + (filtered.length > 0 ? ` (filtered by ${filtered.join(', ')})` : '');
  renderInto($('tasks-body'), JSON.stringify([list.versions, state.task.id]), () =>
    entries.length === 0
      ? emptyRow(7, 'No tasks.')
      : entries.map(({ account_id, scenario, task }) =>
          h(
            'tr',
            { className: task.id === state.task.id ? 'chosen' : undefined, dataset: { task: task.id } },
            h('th', { scope: 'row' }, taskButton(task.id, 'tasks')),
            h('td', {}, h('code', {}, account_id)),
            h('td', {}, task.model),
            h('td', {}, scenario),
            h('td', {}, statusBadge(task.status)),
            h('td', {}, compactTimeline(task)),
            h('td', { className: 'num' }, pointsText(task.points)),
          ),
        ),
  );
  listPager('tasks', list, 'Newer tasks', 'Older tasks');
}

function chooseTask(id, options) {
  if (state.task.id !== id) readers.taskDeliveries = listReader(api, '/_emulator/webhooks/deliveries');
  choose('task', id, options);
}

async function refreshTask(tasks) {
  const entry = await readChosen('task', tasks);
  if (entry === undefined) return;
  const { id } = state.task;
  const deliveries = entry ? await readers.taskDeliveries({ task_id: id, limit: 100 }) : { rows: [] };
  if (state.task.id !== id) return;
  renderTask(entry, deliveries.rows);
}

function renderTask(entry, deliveries) {
  if (!entry) {
    renderInto($('task-facts'), 'gone', () => fact('Status', 'not found: no such task (a reset, or a wrong link?)'));
    for (const id of ['task-timeline', 'task-payloads', 'deliveries']) renderInto($(id), 'gone', () => []);
    return;
  }
  const { task } = entry;
  renderInto($('task-facts'), JSON.stringify(entry), () => [
    fact('Account', h('code', {}, entry.account_id)),
    fact('Model', task.model),
    fact('Scenario', entry.scenario),
    fact('Status', statusBadge(task.status)),
    fact('Frozen', task.points.frozen),
    fact('Charged', task.points.charged),
    fact('Refunded', task.points.refunded),
    task.error ? fact('Error', `${task.error.code}: ${task.error.message}`) : null,
    entry.webhook_url ? fact('Callback address', h('span', { className: 'url' }, entry.webhook_url)) : null,
  ]);
  renderInto($('task-timeline'), JSON.stringify(task), () => timeline(task));
  renderInto($('task-payloads'), JSON.stringify([task.id, task.input, task.output, task.error, task.metadata]), () => [
    jsonBlock('Input', task.input, `${task.id}-input`),
    task.output ? jsonBlock('Output', task.output, `${task.id}-output`) : h('p', { className: 'hint' }, 'Output: none yet.'),
    task.error ? jsonBlock('Error', task.error, `${task.id}-error`) : null,
    Object.keys(task.metadata ?? {}).length > 0 ? jsonBlock('Metadata', task.metadata, `${task.id}-metadata`) : null,
  ]);
  // aria-disabled keeps the buttons focusable (and the focus where it was) once the task has finished.
  const finished = TERMINAL.has(task.status);
  for (const id of ['task-advance', 'task-complete', 'task-fail', 'task-cancel']) $(id).setAttribute('aria-disabled', String(finished));
  renderInto($('deliveries'), JSON.stringify([deliveries, state.clockNow]), () =>
    deliveries.length === 0 ? h('p', { className: 'hint' }, 'No callback messages for this task.') : deliveries.map((d) => deliveryBlock(d, 'task')),
  );
}

function timeline(task) {
  const items = [h('li', { className: 'done' }, h('strong', {}, 'Queued'), ' at ', time(task.created_at))];
  if (task.started_at) {
    items.push(
      h('li', { className: 'done' }, h('strong', {}, 'Processing'), ' from ', time(task.started_at),
        ` (after ${duration(seconds(task.created_at, task.started_at))} in the queue)`),
    );
  } else if (!task.finished_at) {
    items.push(h('li', { className: 'pending' }, h('strong', {}, 'Processing'), ': not started yet'));
  }
  if (task.finished_at) {
    const from = task.started_at ?? task.created_at;
    items.push(
      h('li', { className: `done end-${task.status}` }, h('strong', {}, task.status[0].toUpperCase() + task.status.slice(1)),
        ' at ', time(task.finished_at),
        ` (after ${duration(seconds(from, task.finished_at))} ${task.started_at ? 'of processing' : 'in the queue'})`,
        task.error ? `: ${task.error.code}` : ''),
    );
  } else {
    items.push(h('li', { className: 'pending' }, h('strong', {}, 'Finished'), ': not yet'));
  }
  return items;
}

// ---------------------------------------------------------------------------------------------------------------
// Callback messages: in a task's detail, across tasks, and one chosen

const answerOf = (a) => (a.status_code !== null ? String(a.status_code) : `error: ${a.error ?? 'unknown'}`);

function nextAttempt(d) {
  if (!d.next_attempt_at) return ['none'];
  const wait = state.clockNow ? ` (in ${duration(Math.max(0, seconds(state.clockNow, d.next_attempt_at)))})` : '';
  return [time(d.next_attempt_at), wait];
}

function resendButton(d, where) {
  const label = `Resend ${d.id}`;
  return h('button', { type: 'button', 'aria-label': label, title: label, dataset: { focus: `${where}-resend-${d.id}` }, onClick: (event) => resend(d.id, event.currentTarget) }, 'Resend');
}

const headerLines = (headers) => Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n');

/** A message with its body and every attempt: the headers it sent and the answer it got. */
function deliveryBlock(d, where) {
  return h(
    'div',
    { className: 'delivery' },
    h('p', { className: 'delivery-head' },
      h('code', {}, d.id),
      where === 'task' ? [' (', chooser('open', { pressed: d.id === state.delivery.id, focus: `${where}-open-${d.id}`, onChoose: () => chooseDelivery(d.id), title: `Open ${d.id} among the callbacks` }), ')'] : null,
      ` ${d.type} to `, h('span', { className: 'url' }, d.url), ': ', statusBadge(d.status),
      '. Next due attempt: ', ...nextAttempt(d), ' ', resendButton(d, where)),
    // Folded at first: for a task's message it is mostly the task, shown above.
    jsonBlock('Body sent on every attempt', prettyJson(d.body), `${where}-${d.id}-body`, { open: false }),
    h('div', { className: 'scroll' },
      h('table', {},
        h('caption', {}, `Attempts of ${d.id}`),
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col', className: 'num' }, '#'),
          h('th', { scope: 'col' }, 'Kind'),
          h('th', { scope: 'col' }, 'Time'),
          h('th', { scope: 'col' }, 'Answer'),
          h('th', { scope: 'col', className: 'num' }, 'Duration (ms)'),
          h('th', { scope: 'col' }, 'Response excerpt'),
          h('th', { scope: 'col' }, 'Request headers'))),
        h('tbody', {},
          d.attempts.length === 0
            ? emptyRow(7, 'No attempt yet.')
            : d.attempts.map((a) =>
                h('tr', { className: a.ok ? 'ok' : 'not-ok' },
                  h('td', { className: 'num' }, String(a.number)),
                  h('td', {}, a.kind),
                  h('td', {}, time(a.at)),
                  h('td', {}, answerOf(a)),
                  h('td', { className: 'num' }, String(Math.round(a.duration_ms))),
                  h('td', {}, a.response_excerpt ? h('code', { className: 'excerpt' }, a.response_excerpt) : '–'),
                  h('td', {}, a.request_headers
                    ? h('details', { dataset: { key: `${where}-${d.id}-${a.number}-headers` } },
                        h('summary', {}, `${Object.keys(a.request_headers).length} headers`),
                        h('pre', { className: 'code headers', 'aria-label': `Headers of attempt ${a.number} of ${d.id}` }, headerLines(a.request_headers)))
                    : '–'))),
        ))),
  );
}

function renderCallbacks(list) {
  const messages = list.rows;
  renderInto($('callbacks-body'), JSON.stringify([list.versions, state.delivery.id, state.task.id, state.clockNow]), () =>
    messages.length === 0
      ? emptyRow(9, 'No callback messages.')
      : messages.map((d) => {
          const last = d.attempts.at(-1);
          const failing = d.status === 'failed' || (d.status === 'pending' && last && !last.ok);
          return h(
            'tr',
            { className: [d.id === state.delivery.id ? 'chosen' : '', failing ? 'not-ok' : ''].join(' ').trim() || undefined },
            h('th', { scope: 'row' }, chooser(d.id, { pressed: d.id === state.delivery.id, focus: `callbacks-${d.id}`, onChoose: () => chooseDelivery(d.id) })),
            h('td', {}, d.type),
            h('td', {}, d.task_id ? taskButton(d.task_id, `callbacks-${d.id}`) : '–'),
            h('td', {}, h('code', {}, d.account_id)),
            h('td', {}, statusBadge(d.status), failing && d.status === 'pending' ? ' retrying' : ''),
            h('td', { className: 'num' }, String(d.attempts.length)),
            h('td', {}, last ? [answerOf(last), ' at ', h('time', { datetime: last.at }, last.at.slice(11, 19))] : '–'),
            h('td', {}, ...nextAttempt(d)),
            h('td', {}, resendButton(d, 'callbacks')),
          );
        }),
  );
  listPager('callbacks', list, 'Previous messages', 'More messages');
}

function chooseDelivery(id, options) {
  choose('delivery', id, options);
}

async function refreshDelivery(callbacks) {
  const delivery = await readChosen('delivery', callbacks);
  if (delivery === undefined) return;
  renderInto($('delivery-detail'), JSON.stringify([delivery, state.clockNow, state.task.id]), () =>
    delivery
      ? [
          h('dl', { className: 'facts' },
            fact('Event', delivery.type),
            fact('Task', delivery.task_id ? taskButton(delivery.task_id, 'delivery') : 'none (a test event)'),
            fact('Account', h('code', {}, delivery.account_id)),
            fact('Created', time(delivery.created_at))),
          deliveryBlock(delivery, 'delivery'),
        ]
      : h('p', { className: 'hint' }, 'Not found: no such message (a reset, or past its retention?)'),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Actions

const busy = new WeakSet();

/**
 * Runs one control call, says what happened in the header, and refreshes at once. The button is marked busy
 * rather than disabled while the call runs: a disabled button would drop the keyboard focus.
 */
async function act(button, run) {
  if (button) {
    if (busy.has(button)) return;
    busy.add(button);
    button.setAttribute('aria-busy', 'true');
  }
  try {
    announce(await run());
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) return signOut('The emulator no longer accepts the token; sign in again.');
    announce(error instanceof ApiFailure ? `Refused: ${error.status} ${error.code}: ${error.message}` : String(error), true);
  } finally {
    if (button) {
      busy.delete(button);
      button.removeAttribute('aria-busy');
    }
  }
  await refresh();
}

const pointsOf = (task) => `frozen ${task.points.frozen}, charged ${task.points.charged}, refunded ${task.points.refunded}`;

function taskAction(action) {
  const id = state.task.id;
  if (!id) return;
  const path = `/_emulator/tasks/${encodeURIComponent(id)}/${action}`;
  const button = $(`task-${action}`);
  if (button.getAttribute('aria-disabled') === 'true' && state.task.item) {
    announce(`Task ${id} is already ${state.task.item.task.status}.`, true);
    return;
  }
  act(button, async () => {
    if (action === 'fail') {
      const code = $('fail-code').value;
      const task = await api('POST', path, { code });
      return `Task ${id} failed with ${code}: ${pointsOf(task)}.`;
    }
    const task = await api('POST', path, action === 'complete' ? {} : undefined);
    return `Task ${id} is ${task.status}: ${pointsOf(task)}.`;
  });
}

function resend(id, button) {
  act(button, async () => {
    const delivery = await api('POST', `/_emulator/webhooks/deliveries/${encodeURIComponent(id)}/resend`);
    const last = delivery.attempts[delivery.attempts.length - 1];
    const answer = last ? (last.status_code !== null ? `answered ${last.status_code}` : `failed: ${last.error}`) : 'sent';
    return `Resent ${id}: ${answer}.`;
  });
}

/** The pager below a list: another page is read at once. */
function listPager(name, list, previous, next) {
  const onMove = (page) => {
    state.pages[name] = page;
    refresh();
  };
  pager($(`${name}-pager`), { page: list.page, hasMore: list.has_more, previous, next, onMove });
}

// ---------------------------------------------------------------------------------------------------------------
// Call records

function renderRecords(list) {
  const records = list.rows;
  $('records-caption').textContent = `Call records of /v1 requests, newest first: ${records.length} on page ${list.page}`;
  renderInto($('records-body'), JSON.stringify([list.versions, state.record.id, state.task.id]), () =>
    records.length === 0
      ? emptyRow(9, 'No call records.')
      : records.map((r) =>
          h(
            'tr',
            { className: [r.request_id === state.record.id ? 'chosen' : '', r.status >= 400 ? 'not-ok' : ''].join(' ').trim() || undefined },
            h('th', { scope: 'row' }, chooser(r.request_id, { pressed: r.request_id === state.record.id, focus: `records-${r.request_id}`, onChoose: () => chooseRecord(r.request_id) })),
            h('td', {}, time(r.at)),
            h('td', {}, `${r.method} ${r.path}`),
            h('td', { className: 'num' }, String(r.status)),
            h('td', {}, r.error_code ?? '–'),
            h('td', {}, r.model ?? '–'),
            h('td', {}, r.account_id ? h('code', {}, r.account_id) : '–'),
            h('td', {}, r.task_id ? taskButton(r.task_id, `records-${r.request_id}`) : '–'),
            h('td', { className: 'num' }, String(Math.round(r.latency_ms))),
          ),
        ),
  );
  listPager('records', list, 'Newer records', 'Older records');
}

function chooseRecord(id, options) {
  choose('record', id, options);
}

/** A call record with the task it made, if any: that task holds what a submission's body said, for its curl. */
async function readRecord(id) {
  const record = await readOrNull(`/_emulator/records/${encodeURIComponent(id)}`);
  const task = record?.task_id ? await readOrNull(`/_emulator/tasks/${encodeURIComponent(record.task_id)}`) : null;
  return record && { record, task };
}

async function refreshRecord(records) {
  const chosen = await readChosen('record', records);
  if (chosen !== undefined) renderRecord(chosen);
}

function renderRecord(chosen) {
  if (!chosen) {
    renderInto($('record-facts'), 'gone', () => fact('Record', 'not found: no such request id (a reset, or older than 30 days?)'));
    for (const id of ['record-payloads', 'record-curl', 'curl-note']) renderInto($(id), 'gone', () => []);
    return;
  }
  const { record, task } = chosen;
  const text = record.text;
  renderInto($('record-facts'), JSON.stringify([record, state.task.id]), () => [
    fact('Time', time(record.at)),
    fact('Call', `${record.method} ${record.path}`),
    fact('Status', String(record.status)),
    record.error_code ? fact('Error code', record.error_code) : null,
    fact('Model', record.model ?? '–'),
    fact('Account', record.account_id ? h('code', {}, record.account_id) : '–'),
    fact('Key', record.key ? h('code', {}, redactKey(record.key)) : '–'),
    record.task_id ? fact('Task', taskButton(record.task_id, 'record')) : null,
    fact('Latency', `${Math.round(record.latency_ms)} ms`),
    text ? fact('Streamed', text.stream ? 'yes' : 'no') : null,
    text ? fact('Tokens in / out', `${text.input_tokens} / ${text.output_tokens}`) : null,
    text ? fact('Points (frozen / charged / refunded)', pointsText(text.points)) : null,
    text?.client_closed ? fact('Client', 'went away mid-stream') : null,
  ]);
  renderInto($('record-payloads'), JSON.stringify([record.request_id, text?.content ?? null]), () => {
    if (!text) return [];
    if (!text.content) return h('p', { className: 'hint' }, 'Prompt and output are not recorded: start the emulator with --record-content to keep them.');
    return [
      jsonBlock('Prompt', text.content.prompt, `${record.request_id}-prompt`),
      jsonBlock('Output', text.content.output, `${record.request_id}-output`),
    ];
  });
  const { command, note } = curlFor(record, { origin: location.origin, task });
  $('curl-note').textContent = note;
  renderInto($('record-curl'), command, () => command);
}

async function copyCurl() {
  const pre = $('record-curl');
  const command = pre.textContent;
  if (!command) return;
  try {
    await navigator.clipboard.writeText(command);
    announce(`Copied the curl command of ${state.record.id}.`);
  } catch {
    // Without clipboard access (an insecure origin, a denied permission) the command is selected to copy by hand.
    window.getSelection()?.selectAllChildren(pre);
    announce('Could not reach the clipboard: the command is selected, copy it with your keyboard.', true);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Scenarios

function renderScenarios(scenarios) {
  renderInto($('scenarios-body'), JSON.stringify(scenarios), () =>
    scenarios.length === 0
      ? emptyRow(5, 'No scenarios.')
      : scenarios.map((s) =>
          h(
            'tr',
            { dataset: { scenario: s.name } },
            h('th', { scope: 'row' }, h('code', {}, s.name)),
            h('td', {}, scenarioKind(s)),
            h('td', {}, scenarioOutcome(s)),
            h('td', {}, scenarioTiming(s)),
            h('td', {}, s.description ?? ''),
          ),
        ),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Wiring

$('login').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('token');
  const token = input.value.trim();
  if (!token) return;
  if (await signIn(token)) {
    input.value = '';
    $('main').focus();
  } else {
    input.focus();
    input.select();
  }
});

$('logout').addEventListener('click', () => signOut('Signed out.'));

for (const button of document.querySelectorAll('[data-advance]')) {
  button.addEventListener('click', () => advanceClock(Number(button.dataset.advance), button));
}

$('clock-speed-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const speed = Number($('clock-speed-input').value);
  if (!(speed > 0)) return announce('Give the speed as a number above 0.', true);
  act(event.submitter ?? null, async () => {
    const result = await api('POST', '/_emulator/clock/speed', { speed });
    return `The clock now runs ${result.speed}× wall time.`;
  });
});

$('advance-custom').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = Number($('advance-seconds').value);
  if (!Number.isFinite(value) || value < 0) return announce('Give the seconds to advance as a number of 0 or more.', true);
  advanceClock(value, event.submitter ?? null);
});

const FORMS = { 'account-filters': 'accounts', 'task-filters': 'tasks', 'record-filters': 'records', 'callback-filters': 'callbacks', 'ledger-filters': null };
for (const [formId, list] of Object.entries(FORMS)) {
  const form = $(formId);
  const apply = () => {
    // Other filters, other pages: back to the first.
    if (list) state.pages[list] = 1;
    if (!list) state.ledger = { ...state.ledger, entries: [] };
    refresh();
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (form.reportValidity()) apply();
  });
  form.addEventListener('change', () => {
    if (form.checkValidity()) apply();
  });
}

for (const action of ['advance', 'complete', 'fail', 'cancel']) {
  $(`task-${action}`).addEventListener('click', () => taskAction(action));
}

$('ledger-older').addEventListener('click', () => loadOlderEntries().catch(reportPollError));
$('copy-curl').addEventListener('click', copyCurl);

// The section links scroll without touching the address, which names the chosen item.
for (const link of document.querySelectorAll('nav a')) {
  link.addEventListener('click', (event) => {
    event.preventDefault();
    reveal(link.getAttribute('href').slice(1));
  });
}

window.addEventListener('hashchange', () => openFromHash());
window.addEventListener('popstate', () => openFromHash());

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) signIn(saved, { quiet: true });
