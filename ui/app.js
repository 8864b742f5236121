// The emulator's dashboard: plain ES module, no build step, no library. It reads and steers the control API
// under /_emulator with the admin token the user signs in with (kept in this tab's sessionStorage only), and
// polls every POLL_MS. Everything from the emulator is written with textContent, never parsed as HTML.
/* global document, fetch, sessionStorage, setTimeout, clearTimeout, FormData, URLSearchParams, CSS */

const TOKEN_KEY = 'svc-emulator-admin-token';
const POLL_MS = 1500;
const SCENARIO_EVERY = 10; // polls between scenario reloads: they change only when someone loads new ones
const LEDGER_ROWS = 200;
const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

const state = {
  token: null,
  timer: null,
  ticks: 0,
  clockNow: null,
  accountIds: [],
  ledgerAccount: null,
  taskId: null,
  task: null, // the chosen task's admin list entry: {account_id, scenario, task}
  models: new Set(),
  lastError: '',
};

const $ = (id) => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`The page has no #${id}.`);
  return el;
};

// ---------------------------------------------------------------------------------------------------------------
// Talking to the control API

class ApiFailure extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  // The header marks the dashboard's own calls: its polling reads are logged at debug, not info.
  const headers = { Authorization: `Bearer ${state.token}`, 'X-Emulator-Client': 'dashboard' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    cache: 'no-store',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const error = data && data.error ? data.error : {};
    throw new ApiFailure(res.status, error.code ?? 'error', error.message ?? `HTTP ${res.status}`);
  }
  return data;
}

const query = (params) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== '' && value != null) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};

// ---------------------------------------------------------------------------------------------------------------
// Building DOM

/** h('td', {className: 'num'}, 'text', node, ...): an element; strings become text nodes. */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'className') el.className = value;
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name.startsWith('on')) el.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name in el && typeof value !== 'string') el[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return el;
}

const signatures = new WeakMap();

/**
 * Replaces a container's children only when what it shows changed, and puts the keyboard focus back on the
 * control with the same data-focus key, so polling never pulls focus out from under a keyboard user.
 */
function renderInto(container, signature, build) {
  if (signatures.get(container) === signature) return;
  signatures.set(container, signature);
  const focused = document.activeElement;
  const focusKey = focused && container.contains(focused) ? focused.dataset.focus : undefined;
  container.replaceChildren(...[build()].flat());
  if (focusKey) container.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`)?.focus();
}

const time = (iso) => (iso ? h('time', { datetime: iso }, iso.replace('T', ' ').replace(/\+08:00$/, '')) : '–');

const seconds = (fromIso, toIso) => Math.round((Date.parse(toIso) - Date.parse(fromIso)) / 1000);

const duration = (s) => {
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.floor(s / 60)} min ${s % 60 ? `${s % 60} s` : ''}`.trim();
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
};

const statusBadge = (status) => h('span', { className: `badge badge-${status}` }, status);

const emptyRow = (columns, text) => h('tr', {}, h('td', { colSpan: columns, className: 'empty' }, text));

// ---------------------------------------------------------------------------------------------------------------
// Messages

function announce(message, isError = false) {
  const status = $('status');
  status.textContent = message;
  status.classList.toggle('error', isError);
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
  $('login').hidden = true;
  $('session').hidden = false;
  $('signed-out').hidden = true;
  $('dashboard').hidden = false;
  $('nav').hidden = false;
  state.ticks = 0;
  await refresh();
  if (!quiet) announce('Signed in.');
  poll();
  return true;
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = null;
  clearTimeout(state.timer);
  $('login').hidden = false;
  $('session').hidden = true;
  $('signed-out').hidden = false;
  $('dashboard').hidden = true;
  $('nav').hidden = true;
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
  const taskFilters = formValues($('task-filters'));
  const recordFilters = formValues($('record-filters'));
  const wantScenarios = state.ticks++ % SCENARIO_EVERY === 0;
  try {
    const [clock, accounts, tasks, records, scenarios] = await Promise.all([
      api('GET', '/_emulator/clock'),
      api('GET', '/_emulator/accounts'),
      api('GET', `/_emulator/tasks${query(taskFilters)}`),
      api('GET', `/_emulator/records${query(recordFilters)}`),
      wantScenarios ? api('GET', '/_emulator/scenarios') : null,
    ]);
    renderClock(clock);
    renderAccounts(accounts.data);
    for (const entry of tasks.data) state.models.add(entry.task.model);
    for (const record of records.data) if (record.model) state.models.add(record.model);
    renderModels();
    renderTasks(tasks.data, taskFilters);
    renderRecords(records.data);
    if (scenarios) renderScenarios(scenarios.data);
    await Promise.all([refreshLedger(), refreshTask(tasks.data)]);
    if (state.lastError) announce('Connected again.');
    state.lastError = '';
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) signOut('The emulator no longer accepts the token; sign in again.');
    else if (error instanceof ApiFailure && error.status === 422) reportPollError(new Error(`a filter is not valid: ${error.message}`));
    else reportPollError(error);
  }
}

function formValues(form) {
  const values = {};
  for (const [name, value] of new FormData(form)) values[name] = String(value).trim();
  return values;
}

// ---------------------------------------------------------------------------------------------------------------
// Clock

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
    return `Clock advanced ${duration(secondsToAdvance)} to ${result.now.replace('T', ' ').replace(/\+08:00$/, '')}.`;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Accounts and ledger

function renderAccounts(accounts) {
  const ids = accounts.map((a) => a.id);
  if (!state.ledgerAccount || !ids.includes(state.ledgerAccount)) state.ledgerAccount = ids[0] ?? null;
  if (ids.join() !== state.accountIds.join()) {
    state.accountIds = ids;
    for (const select of [$('task-account'), $('record-account')]) {
      const chosen = select.value;
      select.replaceChildren(h('option', { value: '' }, 'Any'), ...ids.map((id) => h('option', { value: id }, id)));
      select.value = ids.includes(chosen) ? chosen : '';
    }
  }
  renderInto($('accounts-body'), JSON.stringify([accounts, state.ledgerAccount]), () =>
    accounts.length === 0
      ? emptyRow(6, 'No accounts.')
      : accounts.map((a) =>
          h(
            'tr',
            { className: a.id === state.ledgerAccount ? 'chosen' : undefined },
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
                  'aria-pressed': String(a.id === state.ledgerAccount),
                  dataset: { focus: `ledger-${a.id}` },
                  onClick: () => {
                    state.ledgerAccount = a.id;
                    refresh();
                  },
                },
                `Ledger of ${a.id}`,
              ),
            ),
          ),
        ),
  );
}

async function refreshLedger() {
  const id = state.ledgerAccount;
  if (!id) {
    $('ledger-caption').textContent = 'No account chosen';
    renderInto($('ledger-body'), 'none', () => emptyRow(5, 'No account.'));
    return;
  }
  const ledger = await api('GET', `/_emulator/accounts/${encodeURIComponent(id)}/ledger`);
  const entries = ledger.data.slice(-LEDGER_ROWS).reverse();
  $('ledger-caption').textContent =
    `Ledger of ${id}: ${ledger.data.length} entries, newest first` +
    (ledger.data.length > LEDGER_ROWS ? ` (the last ${LEDGER_ROWS} shown)` : '');
  renderInto($('ledger-body'), JSON.stringify([id, ledger.data.length, entries[0]?.id]), () =>
    entries.length === 0
      ? emptyRow(5, 'No entries.')
      : entries.map((e) =>
          h(
            'tr',
            { className: `kind-${e.kind}` },
            h('td', { className: 'num' }, String(e.id)),
            h('td', {}, time(e.at)),
            h('td', {}, e.kind),
            h('td', { className: 'num' }, e.kind === 'refund' || e.kind === 'fund' ? `+${e.points}` : e.points),
            h('td', {}, e.task_id ? taskButton(e.task_id) : '–'),
          ),
        ),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Tasks

function renderModels() {
  const list = $('models');
  const known = [...state.models].sort();
  renderInto(list, known.join(), () => known.map((model) => h('option', { value: model })));
}

function taskButton(id, where = 'ledger') {
  return h(
    'button',
    {
      type: 'button',
      className: 'link',
      'aria-pressed': String(id === state.taskId),
      dataset: { focus: `${where}-task-${id}` },
      onClick: () => chooseTask(id),
    },
    id,
  );
}

function compactTimeline(task) {
  const short = (iso) => (iso ? iso.slice(11, 19) : '…');
  const parts = [short(task.created_at), short(task.started_at)];
  if (task.finished_at || !task.started_at) parts.push(short(task.finished_at));
  return h('span', { className: 'timeline-compact' }, parts.join(' → '));
}

function renderTasks(entries, filters) {
  const shown = entries.length;
  $('tasks-caption').textContent =
    `Tasks, newest first: ${shown} shown` +
    (filters.account || filters.model || filters.status
      ? ` (filtered by ${[filters.account && `account ${filters.account}`, filters.model && `model ${filters.model}`, filters.status && `status ${filters.status}`].filter(Boolean).join(', ')})`
      : '');
  renderInto($('tasks-body'), JSON.stringify([entries, state.taskId]), () =>
    entries.length === 0
      ? emptyRow(7, 'No tasks.')
      : entries.map(({ account_id, scenario, task }) =>
          h(
            'tr',
            { className: task.id === state.taskId ? 'chosen' : undefined, dataset: { task: task.id } },
            h('th', { scope: 'row' }, taskButton(task.id, 'tasks')),
            h('td', {}, h('code', {}, account_id)),
            h('td', {}, task.model),
            h('td', {}, scenario),
            h('td', {}, statusBadge(task.status)),
            h('td', {}, compactTimeline(task)),
            h('td', { className: 'num' }, `${task.points.frozen} / ${task.points.charged} / ${task.points.refunded}`),
          ),
        ),
  );
}

function chooseTask(id) {
  state.taskId = id;
  state.task = null;
  $('task-heading').textContent = `Task ${id}`;
  $('task-none').hidden = true;
  $('task-detail').hidden = false;
  signatures.delete($('tasks-body'));
  signatures.delete($('ledger-body'));
  $('task-heading').focus();
  refresh();
}

async function refreshTask(listed) {
  const id = state.taskId;
  if (!id) return;
  let entry = listed.find((e) => e.task.id === id);
  if (!entry) {
    // Filtered out of the table: look it up among its account's tasks (or everyone's when that is not known yet).
    const account = state.task?.account_id;
    const all = await api('GET', `/_emulator/tasks${query({ account, limit: 1000 })}`);
    entry = all.data.find((e) => e.task.id === id);
  }
  const deliveries = entry ? await api('GET', `/_emulator/webhooks/deliveries${query({ task_id: id })}`) : { data: [] };
  if (state.taskId !== id) return;
  state.task = entry ?? null;
  renderTask(entry, deliveries.data);
}

function renderTask(entry, deliveries) {
  if (!entry) {
    renderInto($('task-facts'), 'gone', () => [h('div', {}, h('dt', {}, 'Status'), h('dd', {}, 'not found (reset?)'))]);
    renderInto($('task-timeline'), 'gone', () => []);
    renderInto($('deliveries'), 'gone', () => []);
    return;
  }
  const { task } = entry;
  const fact = (name, value) => h('div', {}, h('dt', {}, name), h('dd', {}, value));
  renderInto($('task-facts'), JSON.stringify(entry), () => [
    fact('Account', h('code', {}, entry.account_id)),
    fact('Model', task.model),
    fact('Scenario', entry.scenario),
    fact('Status', statusBadge(task.status)),
    fact('Frozen', task.points.frozen),
    fact('Charged', task.points.charged),
    fact('Refunded', task.points.refunded),
    task.error ? fact('Error', `${task.error.code}: ${task.error.message}`) : null,
  ]);
  renderInto($('task-timeline'), JSON.stringify(task), () => timeline(task));
  // aria-disabled keeps the buttons focusable (and the focus where it was) once the task has finished.
  const finished = TERMINAL.has(task.status);
  for (const id of ['task-advance', 'task-complete', 'task-fail', 'task-cancel']) $(id).setAttribute('aria-disabled', String(finished));
  renderInto($('deliveries'), JSON.stringify([deliveries, state.clockNow]), () => deliveryTables(deliveries));
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

function deliveryTables(deliveries) {
  if (deliveries.length === 0) return h('p', { className: 'hint' }, 'No callback messages for this task.');
  return deliveries.map((d) => {
    const next = d.next_attempt_at
      ? [time(d.next_attempt_at), state.clockNow ? ` (in ${duration(Math.max(0, seconds(state.clockNow, d.next_attempt_at)))})` : '']
      : ['none'];
    return h(
      'div',
      { className: 'delivery' },
      h('p', { className: 'delivery-head' },
        h('code', {}, d.id), ` ${d.type} to `, h('span', { className: 'url' }, d.url), ': ', statusBadge(d.status),
        '. Next due attempt: ', ...next, ' ',
        h('button', { type: 'button', dataset: { focus: `resend-${d.id}` }, onClick: (event) => resend(d.id, event.currentTarget) },
          `Resend ${d.id}`)),
      h('div', { className: 'scroll' },
        h('table', {},
          h('caption', {}, `Attempts of ${d.id}`),
          h('thead', {}, h('tr', {},
            h('th', { scope: 'col', className: 'num' }, '#'),
            h('th', { scope: 'col' }, 'Kind'),
            h('th', { scope: 'col' }, 'Time'),
            h('th', { scope: 'col' }, 'Answer'),
            h('th', { scope: 'col', className: 'num' }, 'Duration (ms)'),
            h('th', { scope: 'col' }, 'Response excerpt'))),
          h('tbody', {},
            d.attempts.length === 0
              ? emptyRow(6, 'No attempt yet.')
              : d.attempts.map((a) =>
                  h('tr', { className: a.ok ? 'ok' : 'not-ok' },
                    h('td', { className: 'num' }, String(a.number)),
                    h('td', {}, a.kind),
                    h('td', {}, time(a.at)),
                    h('td', {}, a.status_code !== null ? String(a.status_code) : `error: ${a.error ?? 'unknown'}`),
                    h('td', { className: 'num' }, String(Math.round(a.duration_ms))),
                    h('td', {}, a.response_excerpt ? h('code', { className: 'excerpt' }, a.response_excerpt) : '–'))),
          ))),
    );
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Actions

const busy = new WeakSet();

/**
 * Runs one control call, says what happened, and refreshes at once. The button is marked busy rather than
 * disabled while the call runs: a disabled button would drop the keyboard focus.
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

const points = (task) => `frozen ${task.points.frozen}, charged ${task.points.charged}, refunded ${task.points.refunded}`;

function taskAction(action) {
  const id = state.taskId;
  if (!id) return;
  const path = `/_emulator/tasks/${encodeURIComponent(id)}/${action}`;
  const button = $(`task-${action}`);
  if (button.getAttribute('aria-disabled') === 'true' && state.task) {
    announce(`Task ${id} is already ${state.task.task.status}.`, true);
    return;
  }
  act(button, async () => {
    if (action === 'fail') {
      const code = $('fail-code').value;
      const task = await api('POST', path, { code });
      return `Task ${id} failed with ${code}: ${points(task)}.`;
    }
    const task = await api('POST', path, action === 'complete' ? {} : undefined);
    return `Task ${id} is ${task.status}: ${points(task)}.`;
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

// ---------------------------------------------------------------------------------------------------------------
// Call records and scenarios

function renderRecords(records) {
  renderInto($('records-body'), JSON.stringify(records), () =>
    records.length === 0
      ? emptyRow(9, 'No call records.')
      : records.map((r) =>
          h(
            'tr',
            { className: r.status >= 400 ? 'not-ok' : undefined },
            h('th', { scope: 'row' }, h('code', {}, r.request_id)),
            h('td', {}, time(r.at)),
            h('td', {}, `${r.method} ${r.path}`),
            h('td', { className: 'num' }, String(r.status)),
            h('td', {}, r.error_code ?? '–'),
            h('td', {}, r.model ?? '–'),
            h('td', {}, r.account_id ? h('code', {}, r.account_id) : '–'),
            h('td', {}, r.task_id ? taskButton(r.task_id, 'records') : '–'),
            h('td', { className: 'num' }, String(Math.round(r.latency_ms))),
          ),
        ),
  );
}

function scenarioTimes(s) {
  const never = s.outcome === 'timeout' || (s.failure && s.failure.during === 'queued');
  const span = (t) => `${t.queue_seconds ?? s.queue_seconds ?? '–'} + ${never ? '–' : t.processing_seconds ?? s.processing_seconds ?? '–'}`;
  const perModel = Object.entries(s.per_model ?? {});
  if (perModel.length === 0) return span(s);
  return h('ul', { className: 'plain' }, h('li', {}, `${span(s)} (other models)`), ...perModel.map(([model, t]) => h('li', {}, `${span(t)} (${model})`)));
}

function renderScenarios(scenarios) {
  renderInto($('scenarios-body'), JSON.stringify(scenarios), () =>
    scenarios.length === 0
      ? emptyRow(4, 'No scenarios.')
      : scenarios.map((s) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, h('code', {}, s.name)),
            h(
              'td',
              {},
              s.outcome +
                (s.failure ? ` (${s.failure.code}${s.failure.during === 'queued' ? ', in the queue' : ''})` : '') +
                (s.cancelable_while_processing ? '; cancelable while processing' : ''),
            ),
            h('td', {}, scenarioTimes(s)),
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

for (const form of [$('task-filters'), $('record-filters')]) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (form.reportValidity()) refresh();
  });
  form.addEventListener('change', () => {
    if (form.checkValidity()) refresh();
  });
}

for (const action of ['advance', 'complete', 'fail', 'cancel']) {
  $(`task-${action}`).addEventListener('click', () => taskAction(action));
}

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) signIn(saved, { quiet: true });
