// The verdict: how the clients coped since the last reset, check by check (GET /_emulator/verdict), for every
// client, one key's or one account's; each failed check with its reason and the request ids and webhook-ids that
// show it, which open their call record or callback message. Judging reads the whole client log, so the panel reads
// it when asked (Refresh verdict, a probe) and not on every poll. A probe sends an account's callback address a
// correctly signed delivery with a stale timestamp (POST /_emulator/verdict/probe). A key or account the world never
// held is no client to judge: the panel says so instead of a verdict.
import { ApiFailure, query } from './api.js';
import { $, chooser, emptyRow, h, renderInto } from './dom.js';
import { formValues } from './filters.js';

/** Evidence shown per check; the rest are counted. */
const EVIDENCE_SHOWN = 12;

const STATUS_TEXT = { pass: 'pass', fail: 'fail', not_exercised: 'not exercised' };
/** The colours of the task states that mean the same: done well, gone wrong, still to come. */
const STATUS_BADGE = { pass: 'badge-succeeded', fail: 'badge-failed', not_exercised: 'badge-pending' };

/** `app.records` and `app.callbacks` are read when used: the parts are made in any order. */
export function createVerdict(app) {
  const { state, api, actions } = app;
  // The panel's own state: the filter the shown verdict was judged with, and that verdict (null: not read yet), or
  // what of the filter the world never held ('key sk-…', 'account acct_…'; null: nothing missing).
  const shown = { filter: {}, verdict: null, missing: null };

  /** A request id opens its call record, a webhook-id its callback message; anything else is shown as it is. */
  function evidenceOf(id, check) {
    const where = `verdict-${check}`;
    if (id.startsWith('req_')) return app.records.button(id, where);
    if (id.startsWith('msg_')) {
      return chooser(id, { pressed: id === state.delivery.id, focus: `${where}-${id}`, onChoose: () => app.callbacks.choose(id), title: `Open the callback message ${id}` });
    }
    return h('code', {}, id);
  }

  function evidenceCell(check) {
    const ids = check.evidence.slice(0, EVIDENCE_SHOWN);
    const more = check.evidence.length - ids.length;
    if (ids.length === 0) return '–';
    return [ids.flatMap((id, i) => (i === 0 ? [evidenceOf(id, check.id)] : [' ', evidenceOf(id, check.id)])), more > 0 ? ` and ${more} more` : null];
  }

  const whose = ({ key, account }) => [key ? `key ${key}` : null, account ? `account ${account}` : null].filter(Boolean).join(' and ') || 'every client';

  /**
   * What of `filter` the verdict's 404 says the world never held, or null when the 404 is another's (the session
   * shown gone, say: the poll takes the page back to the default world). The server names it in its message, as
   * `No key … here.` or `No account … here.`; both are looked for, since with both given either may be missing.
   */
  function missingOf(filter, error) {
    if (!(error instanceof ApiFailure && error.status === 404 && error.code === 'not_found')) return null;
    if (filter.key && error.message === `No key ${filter.key} here.`) return `key ${filter.key}`;
    if (filter.account && error.message === `No account ${filter.account} here.`) return `account ${filter.account}`;
    return null;
  }

  const missingText = (missing) => `No ${missing} in this world.`;

  /** Renders the verdict held; also on every poll, so that the evidence of a chosen record or message shows as chosen. */
  function render() {
    const { verdict, filter, missing } = shown;
    // A failed verdict's line is in the failure's colour: the hint's grey would say nothing went wrong.
    $('verdict-summary').classList.toggle('verdict-failed', verdict?.ok === false && missing === null);
    renderInto($('verdict-summary'), JSON.stringify([verdict?.counts, filter, missing]), () =>
      missing
        ? missingText(missing)
        : verdict === null
        ? 'Not judged yet: Refresh verdict judges what the clients did since the last reset.'
        : `${verdict.ok ? 'No check failed' : 'A check failed'} for ${whose(filter)}: ${verdict.counts.pass} pass, ${verdict.counts.fail} fail, ` +
          `${verdict.counts.not_exercised} not exercised.`,
    );
    renderInto($('verdict-body'), JSON.stringify([verdict, missing, state.record.id, state.delivery.id]), () =>
      missing
        ? emptyRow(4, 'Nothing to judge: this world never held it, nor saw it used.')
        : verdict === null
        ? emptyRow(4, 'Not judged yet.')
        : verdict.checks.map((check) =>
            h(
              'tr',
              { className: check.status === 'fail' ? 'not-ok' : undefined },
              h('th', { scope: 'row' }, h('code', {}, check.id)),
              h('td', {}, h('span', { className: `badge ${STATUS_BADGE[check.status] ?? ''}`.trim() }, STATUS_TEXT[check.status] ?? check.status)),
              h('td', {}, check.reason ?? '–'),
              h('td', {}, evidenceCell(check)),
            ),
          ),
    );
  }

  /**
   * Judges again with the filter form's values; resolves with what is said of it in the header, `failed` when a
   * check failed, and the verdict judged (null for a filter the world never held).
   */
  async function judge() {
    const { key = '', account = '' } = formValues($('verdict-filters'));
    const filter = { ...(key ? { key } : {}), ...(account ? { account } : {}) };
    let verdict = null;
    let missing = null;
    try {
      verdict = await api('GET', `/_emulator/verdict${query(filter)}`);
    } catch (error) {
      missing = missingOf(filter, error);
      if (missing === null) throw error;
    }
    Object.assign(shown, { filter, verdict, missing });
    render();
    if (missing) return { message: missingText(missing), failed: false, verdict };
    return { message: `Verdict for ${whose(filter)}: ${verdict.counts.fail} check(s) failed.`, failed: !verdict.ok, verdict };
  }

  /** Drops the verdict shown: it was judged in a world no longer shown. */
  function forget() {
    Object.assign(shown, { filter: {}, verdict: null, missing: null });
    render();
  }

  function start() {
    render();
    $('verdict-filters').addEventListener('submit', (event) => {
      event.preventDefault();
      actions.act(event.submitter ?? null, judge);
    });
    $('verdict-probe').addEventListener('submit', (event) => {
      event.preventDefault();
      const account = formValues($('verdict-probe')).account;
      actions.act(event.submitter ?? null, async () => {
        const probe = await api('POST', '/_emulator/verdict/probe', { account });
        const answer = probe.status === null ? 'did not answer' : `answered ${probe.status}`;
        // The probe's answer is in the client log now: the verdict shown is judged again. The line says a failure
        // when this probe is what failed the receiver's check (it took the stale delivery).
        const { verdict } = await judge();
        const stale = verdict?.checks.find((c) => c.id === 'receiver.rejects-stale-timestamp');
        const failed = stale?.status === 'fail' && stale.evidence.includes(probe.webhook_id);
        return { message: `Stale-timestamp probe ${probe.webhook_id} sent to ${probe.url}: the receiver ${answer}.`, failed };
      });
    });
  }

  return { render, forget, start };
}
