// The emulator's dashboard: plain ES modules, no build step, no library. It reads and steers the control API
// under /_emulator with the admin token the user signs in with (kept by the emulator for this browser, session.js), in the
// world chosen in the header's picker (the default world or one session's), and polls every 1.5 s, reading only
// what changed: lists send the versions of the rows the page holds, the ledger asks for the entries after the
// newest it has. Everything from the emulator is written as text.
//
// This is the entry module: `start()` makes the state and every part of the page, hands each the few things it
// uses, and wires the page's controls. No other module does anything when imported.
/* global window */

import { ApiFailure, createApi, listReader } from './api.js';
import { createAccounts } from './accounts.js';
import { createActions } from './actions.js';
import { createCallbacks } from './callbacks.js';
import { createClock } from './clock.js';
import { createDetails } from './details.js';
import { createFaults } from './faults.js';
import { $, invalidate } from './dom.js';
import { clearWorldFilters, listFilters, renderDatalists, startFilters } from './filters.js';
import { createLedger } from './ledger.js';
import { followAddress, keepBelowHeader, openFromHash } from './links.js';
import { createMessages } from './messages.js';
import { createCounts, renderOverview } from './overview.js';
import { createRecords } from './records.js';
import { createRefresher } from './refresher.js';
import { renderScenarios } from './scenarios.js';
import { createSearch } from './search.js';
import { createSession } from './session.js';
import { createState, resetWorld } from './store.js';
import { createTasks } from './tasks.js';
import { createVerdict } from './verdict.js';
import { createWorlds } from './worlds.js';

/** Polls between scenario reloads: they change only when someone loads new ones. */
const SCENARIO_EVERY = 10;
/** Polls between reads of the session list, for the picker (the session shown is read on every poll). */
const SESSIONS_EVERY = 4;

/** What shows a world's lists and items: emptied when another world is shown, until its first read fills it. */
const WORLD_SHOWN = [
  ...['overview-facts', 'overview-counts', 'clock-now', 'accounts-body', 'accounts-pager', 'account-facts', 'ledger-body', 'tasks-body', 'tasks-pager'],
  ...['callbacks-body', 'callbacks-pager', 'records-body', 'records-pager', 'scenarios-body', 'faults-body', 'models', 'account-ids'],
];
/** Text about a world's lists: back to the page's own words when another world is shown. */
const WORLD_TEXT = ['clock-mode', 'clock-speed', 'accounts-caption', 'account-heading', 'ledger-caption', 'tasks-caption', 'callbacks-caption', 'records-caption'];

const listReaders = (api) => ({
  accounts: listReader(api, '/_emulator/accounts'),
  tasks: listReader(api, '/_emulator/tasks'),
  records: listReader(api, '/_emulator/records'),
  callbacks: listReader(api, '/_emulator/webhooks/deliveries'),
});

export function start() {
  const state = createState();
  const api = createApi(() => state.token, () => state.world);
  // New readers for each world shown: the versions held are another world's.
  let readers = listReaders(api);
  // What every part may use; the parts themselves are added as they are made, and read from it when used.
  const app = { state, api, ...createMessages(state) };
  app.refresher = createRefresher(state, () => readOnce(app, readers));
  app.refresh = app.refresher.refresh;
  const session = createSession(app, () => openFromHash(choosers));
  app.signOut = session.signOut;
  app.worlds = createWorlds(app);
  app.actions = createActions(app);
  app.clock = createClock(app);
  app.accounts = createAccounts(app);
  app.ledger = createLedger(app);
  app.tasks = createTasks(app);
  app.callbacks = createCallbacks(app);
  app.records = createRecords(app);
  app.faults = createFaults(app);
  app.verdict = createVerdict(app);
  app.counts = createCounts(app);
  app.details = createDetails(app, { task: app.tasks.detail, record: app.records.detail, delivery: app.callbacks.detail });
  const choosers = { task: app.tasks.choose, record: app.records.choose, delivery: app.callbacks.choose, account: app.accounts.choose };
  const search = createSearch(app, choosers);
  const pageText = new Map(WORLD_TEXT.map((id) => [id, $(id).textContent]));
  /** Forgets all that was read of the world shown (a sign-in, another world chosen): nothing of it stays on the page. */
  app.forgetWorld = () => {
    resetWorld(state);
    readers = listReaders(api);
    for (const id of WORLD_SHOWN) {
      $(id).replaceChildren();
      invalidate($(id));
    }
    for (const [id, text] of pageText) $(id).textContent = text;
    app.details.closeAll();
    app.verdict.forget();
    clearWorldFilters();
  };

  keepBelowHeader();
  app.clock.start();
  startFilters(app);
  app.tasks.start();
  app.ledger.start();
  app.records.start();
  app.faults.start();
  app.verdict.start();
  app.worlds.start();
  search.start();
  // The section links are plain links to a view's address: the browser keeps them in its history.
  const followLink = () => {
    if (state.token) followAddress(choosers);
  };
  window.addEventListener('hashchange', followLink);
  window.addEventListener('popstate', followLink);
  session.start();
}

/**
 * Reads every list and what is chosen, and renders them; a 401 signs out, a 404 for a session gone takes the page
 * back to the default world, any other failure is said once. A read begun in a world no longer shown is dropped.
 */
async function readOnce(app, readers) {
  const { state, api } = app;
  if (!state.token) return;
  const { traffic } = api;
  const before = { ...traffic };
  const filters = listFilters();
  const { epoch } = state;
  const tick = state.ticks++;
  try {
    const [clock, accounts, tasks, records, callbacks, scenarios, faults, sessions, counts] = await Promise.all([
      api('GET', '/_emulator/clock'),
      readers.accounts({ ...filters.accounts, page: state.pages.accounts }),
      readers.tasks({ ...filters.tasks, page: state.pages.tasks }),
      readers.records({ ...filters.records, page: state.pages.records }),
      readers.callbacks({ order: 'attention', ...filters.callbacks, page: state.pages.callbacks }),
      tick % SCENARIO_EVERY === 0 ? api('GET', '/_emulator/scenarios') : null,
      // A few rules at most, whose counts change with every request they take: read whole each time.
      api('GET', '/_emulator/faults'),
      app.worlds.read(tick % SESSIONS_EVERY === 0),
      // The overview's counts, on every few polls (overview.js).
      app.counts.read(tick),
    ]);
    // Another world was chosen meanwhile (its read follows), or the one shown is gone.
    if (state.epoch !== epoch || !app.worlds.show(sessions)) return;
    // A page past the end (after a reset, or a narrower filter) goes back to the first.
    const lists = { accounts, tasks, records, callbacks };
    const emptied = Object.entries(lists).filter(([name, list]) => list.rows.length === 0 && state.pages[name] > 1);
    if (emptied.length > 0) {
      for (const [name] of emptied) state.pages[name] = 1;
      app.refresher.again();
      return;
    }
    app.clock.render(clock);
    renderOverview(state, clock);
    app.counts.render(counts);
    app.accounts.render(accounts);
    for (const entry of tasks.rows) state.models.add(entry.task.model);
    for (const record of records.rows) if (record.model) state.models.add(record.model);
    renderDatalists(state);
    app.tasks.render(tasks, filters.tasks);
    app.records.render(records);
    app.callbacks.render(callbacks);
    if (scenarios) renderScenarios(scenarios.data);
    app.faults.render(faults.data);
    // The verdict is read when asked (judging reads the whole client log); only what is chosen is marked again.
    app.verdict.render();
    await Promise.all([
      app.accounts.refreshChosen(accounts),
      app.ledger.refresh(),
      app.tasks.refreshChosen(tasks),
      app.records.refreshChosen(records),
      app.callbacks.refreshChosen(callbacks),
    ]);
    if (state.lastError) app.announce('Connected again.');
    state.lastError = '';
  } catch (error) {
    if (state.epoch !== epoch) return;
    if (error instanceof ApiFailure && error.status === 404 && (await app.worlds.leftGone(error.session))) return;
    if (error instanceof ApiFailure && error.status === 401) app.signOut('The emulator no longer accepts the token; sign in again.');
    else if (error instanceof ApiFailure && error.status === 422) app.reportPollError(new Error(`a filter is not valid: ${error.message}`));
    else app.reportPollError(error);
  }
  const bytes = traffic.bytes - before.bytes;
  $('traffic').textContent = `The last refresh read ${bytes < 10240 ? `${bytes} bytes` : `${Math.round(bytes / 1024)} KB`} in ${traffic.requests - before.requests} requests.`;
}

start();
