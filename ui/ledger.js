// The chosen account's ledger, read from its end: at first the newest entries, then on each poll only those after
// the newest held. Each entry links to what it was for: a task, or a text call's record.
import { ApiFailure, query } from './api.js';
import { $, emptyRow, h, renderInto, time } from './dom.js';

/** New entries read per poll at most; beyond it the ledger jumps to the newest. */
const LEDGER_CATCH_UP = 1000;

const ledgerPath = (id, params) => `/_emulator/accounts/${encodeURIComponent(id)}/ledger${query(params)}`;
const entryNumber = (e) => e.n ?? e.id;
const pageSize = () => Number($('ledger-limit').value) || 50;

/** `app.tasks.button` and `app.records.button` are read when a row is drawn: the parts are made in any order. */
export function createLedger(app) {
  const { state, api } = app;

  /**
   * Reads what is new since the entries held (asking from the newest held, which must come back the same: if not,
   * a reset or an import replaced the ledger, and it is read afresh).
   */
  async function refresh() {
    const ledger = state.ledger;
    const id = ledger.account;
    if (!id) {
      $('ledger-caption').textContent = 'No account chosen';
      renderInto($('ledger-body'), 'none', () => emptyRow(5, 'No account.'));
      return;
    }
    const size = pageSize();
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
    render();
  }

  async function loadOlder() {
    const { account, entries } = state.ledger;
    const oldest = entries[0];
    if (!account || !oldest || entryNumber(oldest) <= 1) return;
    const after = Math.max(0, entryNumber(oldest) - 1 - pageSize());
    const page = await api('GET', ledgerPath(account, { after, limit: entryNumber(oldest) - 1 - after }));
    if (state.ledger.account !== account || state.ledger.entries[0] !== oldest) return;
    state.ledger = { ...state.ledger, entries: [...page.data, ...state.ledger.entries] };
    render();
  }

  /** What an entry was for: its task, or the text call whose record holds its tokens. */
  const forWhat = (e) => {
    if (e.task_id) return app.tasks.button(e.task_id, `ledger-${e.id}`);
    if (e.call_id) return ['call ', app.records.button(e.call_id, `ledger-${e.id}`)];
    return '–';
  };

  function render() {
    const { account, entries, count } = state.ledger;
    $('ledger-caption').textContent =
      `Ledger of ${account}: ${count} entries, newest first` + (entries.length < count ? ` (the newest ${entries.length} shown)` : '');
    $('ledger-older').hidden = entries.length === 0 || entryNumber(entries[0]) <= 1;
    renderInto($('ledger-body'), JSON.stringify([account, count, entries.length, entries.at(-1)?.id, state.task.id, state.record.id]), () =>
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
              h('td', {}, forWhat(e)),
            ),
          ),
    );
  }

  function start() {
    $('ledger-older').addEventListener('click', () => loadOlder().catch(app.reportPollError));
  }

  return { refresh, start };
}
