// Callback messages: in a task's detail, across tasks, and one chosen, each with every attempt's request and answer.
import { readOrNull } from './details.js';
import { chooser, duration, emptyRow, fact, h, jsonBlock, prettyJson, renderInto, seconds, shortTime, statusBadge, time, $ } from './dom.js';
import { outcomeLabel, outcomeOf, rowClass, trialOutcome, TWO_CLOCKS, TRIAL_KINDS, webhookClock } from './labels.js';

const answerOf = (a) => (a.status_code !== null ? String(a.status_code) : `error: ${a.error ?? 'unknown'}`);
const headerLines = (headers) => Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n');

/** A message's state: a trial one (forged, stale) by what its receiver did, as the emulator's status does not say. */
function stateOf(d) {
  const trial = trialOutcome(d);
  const label = trial && outcomeLabel(trial.outcome, trial.kind);
  return label ? [label, h('span', { className: 'hint' }, `, listed as ${d.status}`)] : statusBadge(d.status);
}

/** `: refused, as it should (forged signature)`, after a trial attempt's status; empty after any other. */
function meaning(a) {
  const outcome = outcomeOf(a);
  if (outcome !== 'refused' && outcome !== 'accepted') return '';
  return `: ${outcome === 'refused' ? 'refused, as it should' : 'accepted, where it should have been refused'} (${TRIAL_KINDS[a.kind]})`;
}

/** What a trial message is, in the message's facts; null for any other. */
function trialFact(d) {
  const trial = trialOutcome(d);
  if (!trial) return null;
  const what = `a delivery with a ${TRIAL_KINDS[trial.kind]}, which a correct receiver turns away with any non-2xx status`;
  const words = {
    refused: `refused, as it should: ${what}. The emulator lists it as ${d.status}; it is no failure of the receiver.`,
    accepted: `accepted, a fault of the receiver: ${what}, and this one took it.`,
    failed: `not answered: ${what}. No answer says nothing of the receiver's checks.`,
  };
  return fact('Outcome', words[trial.outcome]);
}

/** `app.details` and `app.tasks` are read when used: the parts are made in any order. */
export function createCallbacks(app) {
  const { state, api, actions } = app;

  /** The detail's spec (details.js). */
  const detail = {
    title: 'Message',
    lists: ['callbacks-body', 'deliveries'],
    keyOf: (d) => d.id,
    read: (id) => readOrNull(api, `/_emulator/webhooks/deliveries/${encodeURIComponent(id)}`),
  };

  const choose = (id, options) => app.details.choose('delivery', id, options);
  const taskButton = (id, where) => app.tasks.button(id, where);

  function nextAttempt(d) {
    if (!d.next_attempt_at) return ['none'];
    const wait = state.clockNow ? ` (in ${duration(Math.max(0, seconds(state.clockNow, d.next_attempt_at)))})` : '';
    return [time(d.next_attempt_at), wait];
  }

  function resendButton(d, where) {
    const label = `Resend ${d.id}`;
    return h('button', { type: 'button', 'aria-label': label, title: label, dataset: { focus: `${where}-resend-${d.id}` }, onClick: (event) => resend(d.id, event.currentTarget) }, 'Resend');
  }

  function resend(id, target) {
    actions.act(target, async () => {
      const delivery = await api('POST', `/_emulator/webhooks/deliveries/${encodeURIComponent(id)}/resend`);
      const last = delivery.attempts[delivery.attempts.length - 1];
      const answer = last ? (last.status_code !== null ? `answered ${last.status_code}${meaning(last)}` : `failed: ${last.error}`) : 'sent';
      return `Resent ${id}: ${answer}.`;
    });
  }

  /** A message with its body and every attempt: the headers it sent and the answer it got. */
  function block(d, where) {
    return h(
      'div',
      { className: 'delivery' },
      h('p', { className: 'delivery-head' },
        h('code', {}, d.id),
        where === 'task' ? [' (', chooser('open', { pressed: d.id === state.delivery.id, focus: `${where}-open-${d.id}`, onChoose: () => choose(d.id), title: `Open ${d.id} among the callbacks` }), ')'] : null,
        ` ${d.type} to `, h('span', { className: 'url' }, d.url), ': ', stateOf(d),
        '. Next due attempt: ', ...nextAttempt(d), ' ', resendButton(d, where)),
      // Folded at first: for a task's message it is mostly the task, shown above.
      jsonBlock('Body sent on every attempt', prettyJson(d.body), `${where}-${d.id}-body`, { open: false }),
      d.attempts.length > 0 ? h('p', { className: 'hint clocks' }, TWO_CLOCKS) : null,
      h('div', { className: 'scroll' },
        h('table', {},
          h('caption', {}, `Attempts of ${d.id}`),
          h('thead', {}, h('tr', {},
            h('th', { scope: 'col', className: 'num' }, '#'),
            h('th', { scope: 'col' }, 'Kind'),
            h('th', { scope: 'col' }, 'Sent at (emulator clock, virtual)'),
            h('th', { scope: 'col' }, 'webhook-timestamp (Unix seconds)'),
            h('th', { scope: 'col' }, 'Answer'),
            h('th', { scope: 'col', className: 'num' }, 'Duration (ms)'),
            h('th', { scope: 'col' }, 'Response excerpt'),
            h('th', { scope: 'col' }, 'Request headers'))),
          h('tbody', {},
            d.attempts.length === 0
              ? emptyRow(8, 'No attempt yet.')
              : d.attempts.map((a) =>
                  h('tr', { className: rowClass(outcomeOf(a)) },
                    h('td', { className: 'num' }, String(a.number)),
                    h('td', {}, a.kind),
                    h('td', {}, time(a.at)),
                    h('td', {}, webhookClock(a)),
                    h('td', {}, answerOf(a), outcomeLabel(outcomeOf(a), a.kind) ? [' ', outcomeLabel(outcomeOf(a), a.kind)] : null),
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

  function render(list) {
    const messages = list.rows;
    renderInto($('callbacks-body'), JSON.stringify([list.versions, state.delivery.id, state.task.id, state.clockNow]), () =>
      messages.length === 0
        ? emptyRow(9, 'No callback messages.')
        : messages.map((d) => {
            const last = d.attempts.at(-1);
            // A trial message is failing only when no one answered it; refused, it did what it should.
            const trial = trialOutcome(d);
            const failing = trial ? trial.outcome !== 'refused' : d.status === 'failed' || (d.status === 'pending' && last && !last.ok);
            return h(
              'tr',
              { className: [d.id === state.delivery.id ? 'chosen' : '', failing ? 'not-ok' : trial ? 'expected' : ''].join(' ').trim() || undefined },
              h('th', { scope: 'row' }, chooser(d.id, { pressed: d.id === state.delivery.id, focus: `callbacks-${d.id}`, onChoose: () => choose(d.id) })),
              h('td', {}, d.type),
              h('td', {}, d.task_id ? taskButton(d.task_id, `callbacks-${d.id}`) : '–'),
              h('td', {}, h('code', {}, d.account_id)),
              h('td', {}, stateOf(d), failing && d.status === 'pending' ? ' retrying' : ''),
              h('td', { className: 'num' }, String(d.attempts.length)),
              h('td', {}, last ? [answerOf(last), ' at ', shortTime(last.at)] : '–'),
              h('td', {}, ...nextAttempt(d)),
              h('td', {}, resendButton(d, 'callbacks')),
            );
          }),
    );
    actions.listPager('callbacks', list, 'Previous messages', 'More messages');
  }

  async function refreshChosen(callbacks) {
    const delivery = await app.details.readChosen('delivery', callbacks);
    if (delivery === undefined) return;
    renderInto($('delivery-detail'), JSON.stringify([delivery, state.clockNow, state.task.id]), () =>
      delivery
        ? [
            h('dl', { className: 'facts' },
              fact('Event', delivery.type),
              fact('Task', delivery.task_id ? taskButton(delivery.task_id, 'delivery') : 'none (a test event)'),
              fact('Account', h('code', {}, delivery.account_id)),
              fact('Created', time(delivery.created_at)),
              trialFact(delivery)),
            block(delivery, 'delivery'),
          ]
        : h('p', { className: 'hint' }, 'Not found: no such message (a reset, or past its retention?)'),
    );
  }

  return { detail, block, choose, render, refreshChosen };
}
