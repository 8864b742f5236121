// Call records: every /v1 request, newest first, and the chosen one with everything recorded of it (its query,
// headers with secrets masked, error message and fields, scenario, how a text call's answer was chosen) and the
// curl command that makes it again.
/* global location */
import { copyText } from './actions.js';
import { curlFor, redactKey } from './curl.js';
import { readOrNull } from './details.js';
import { $, chooser, emptyRow, fact, h, jsonBlock, prettyJson, renderInto, time } from './dom.js';
import { pointsText } from './tasks.js';

/** `GET /v1/tasks?limit=5`: the call as it was sent. */
export const callLine = (record) => `${record.method} ${record.path}${record.query ? `?${record.query}` : ''}`;

/** A request a fault rule dropped without an answer: its record's status was never sent. */
const wasReset = (record) => record.injected_fault?.kind === 'reset';

const headerLines = (headers) => Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n');

/** `app.details` and `app.tasks` are read when used: the parts are made in any order. */
export function createRecords(app) {
  const { state, api, actions, announce } = app;

  /** A call record with the task it made, if any: that task holds what a submission's body said, for its curl. */
  async function read(id) {
    const record = await readOrNull(api, `/_emulator/records/${encodeURIComponent(id)}`);
    const task = record?.task_id ? await readOrNull(api, `/_emulator/tasks/${encodeURIComponent(record.task_id)}`) : null;
    return record && { record, task };
  }

  /** The detail's spec (details.js). */
  const detail = { title: 'Call', lists: ['records-body', 'ledger-body'], keyOf: (r) => r.request_id, read };

  const choose = (id, options) => app.details.choose('record', id, options);

  /** A request id as a button that opens its record; `where` keeps the keyboard focus on it across renders. */
  const button = (id, where) =>
    chooser(id, { pressed: id === state.record.id, focus: `${where}-record-${id}`, onChoose: () => choose(id), title: `Open the call record of ${id}` });

  function render(list) {
    const records = list.rows;
    $('records-caption').textContent = `Call records of /v1 requests, newest first: ${records.length} on page ${list.page}`;
    renderInto($('records-body'), JSON.stringify([list.versions, state.record.id, state.task.id]), () =>
      records.length === 0
        ? emptyRow(9, 'No call records.')
        : records.map((r) =>
            h(
              'tr',
              { className: [r.request_id === state.record.id ? 'chosen' : '', r.status >= 400 || wasReset(r) ? 'not-ok' : ''].join(' ').trim() || undefined },
              h('th', { scope: 'row' }, chooser(r.request_id, { pressed: r.request_id === state.record.id, focus: `records-${r.request_id}`, onChoose: () => choose(r.request_id) })),
              h('td', {}, time(r.at)),
              h('td', { className: 'call' }, callLine(r)),
              h('td', { className: 'num' }, wasReset(r) ? 'reset' : String(r.status)),
              h('td', {}, r.error_code ?? '–'),
              h('td', {}, r.model ?? '–'),
              h('td', {}, r.account_id ? h('code', {}, r.account_id) : '–'),
              h('td', {}, r.task_id ? app.tasks.button(r.task_id, `records-${r.request_id}`) : '–'),
              h('td', { className: 'num' }, String(Math.round(r.latency_ms))),
            ),
          ),
    );
    actions.listPager('records', list, 'Newer records', 'Older records');
  }

  async function refreshChosen(records) {
    const chosen = await app.details.readChosen('record', records);
    if (chosen !== undefined) renderChosen(chosen);
  }

  function renderChosen(chosen) {
    if (!chosen) {
      renderInto($('record-facts'), 'gone', () => fact('Record', 'not found: no such request id (a reset, or older than 30 days?)'));
      for (const id of ['record-payloads', 'record-curl', 'curl-note']) renderInto($(id), 'gone', () => []);
      return;
    }
    const { record, task } = chosen;
    const text = record.text;
    renderInto($('record-facts'), JSON.stringify([record, state.task.id]), () => [
      fact('Time', time(record.at)),
      fact('Call', h('code', {}, callLine(record))),
      fact('Status', wasReset(record) ? 'none: the connection was reset' : String(record.status)),
      record.error_code ? fact('Error code', record.error_code) : null,
      record.error_message ? fact('Error message', record.error_message) : null,
      record.error_details?.length
        ? fact('Fields', h('ul', { className: 'plain', 'aria-label': 'Fields the error named' }, record.error_details.map((d) => h('li', {}, h('code', {}, d.field), `: ${d.message}`))))
        : null,
      fact('Model', record.model ?? '–'),
      fact('Account', record.account_id ? h('code', {}, record.account_id) : '–'),
      fact('Key', record.key ? h('code', {}, redactKey(record.key)) : '–'),
      record.task_id ? fact('Task', app.tasks.button(record.task_id, 'record')) : null,
      record.scenario ? fact('Scenario', record.scenario) : null,
      record.text_answer ? fact('Text answer', answerText(record.text_answer)) : null,
      record.injected_fault ? fact('Injected fault', `${record.injected_fault.kind}, by rule ${record.injected_fault.rule}`) : null,
      fact('Latency', `${Math.round(record.latency_ms)} ms`),
      text ? fact('Streamed', text.stream ? 'yes' : 'no') : null,
      text ? fact('Tokens in / out', `${text.input_tokens} / ${text.output_tokens}`) : null,
      text ? fact('Points (frozen / charged / refunded)', pointsText(text.points)) : null,
      text?.client_closed ? fact('Client', 'went away mid-stream') : null,
    ]);
    renderInto($('record-payloads'), JSON.stringify([record.request_id, record.request_headers ?? null, text?.content ?? null, record.bodies ?? null]), () => [
      record.request_headers ? headersBlock(record) : null,
      ...bodiesOf(record),
      ...contentOf(record),
    ]);
    const { command, note } = curlFor(record, { origin: location.origin, task });
    $('curl-note').textContent = note;
    renderInto($('record-curl'), command, () => command);
  }

  async function copyCurl() {
    const pre = $('record-curl');
    const command = pre.textContent;
    if (!command) return;
    if (await copyText(command, pre)) announce(`Copied the curl command of ${state.record.id}.`);
    else announce('Could not reach the clipboard: the command is selected, copy it with your keyboard.', true);
  }

  function start() {
    $('copy-curl').addEventListener('click', copyCurl);
  }

  return { detail, button, choose, render, refreshChosen, start };
}

const ANSWERED_BY = {
  header: 'named by the X-Emulator-Scenario header',
  match: "picked by the scenario's match rules",
  generated: 'generated (no header or match rule chose a scenario)',
  unmatched: 'none: no match rule fits the call (strict text answers)',
};

/** How a text call's answer was chosen, and which of the scenario's answers it was. */
const answerText = ({ by, answer }) => `${ANSWERED_BY[by] ?? by}${answer ? `, answer ${answer} of its list` : ''}`;

/** The request's headers as sent, credentials and signatures masked by the emulator; folded at first. */
function headersBlock(record) {
  const headers = record.request_headers;
  return h(
    'details',
    { className: 'payload', dataset: { key: `${record.request_id}-headers` } },
    h('summary', {}, 'Request headers ', h('span', { className: 'hint' }, `(${Object.keys(headers).length}, secrets masked)`)),
    h('pre', { className: 'code headers', tabIndex: 0, 'aria-label': 'Request headers' }, headerLines(headers)),
  );
}

/**
 * The request's and the answer's bodies, as the record kept them (`bodies`, only with --record-content: a record
 * without them was made with the option off, so only then does the hint name it).
 */
function bodiesOf(record) {
  const { bodies } = record;
  if (!bodies) return [h('p', { className: 'hint' }, 'Bodies are not recorded: start the emulator with --record-content to keep the request and answer of every call.')];
  return [bodyBlock('Request body', bodies.request, `${record.request_id}-request-body`), bodyBlock('Response body', bodies.response, `${record.request_id}-response-body`)];
}

function bodyBlock(label, body, key) {
  if (!body) return h('p', { className: 'hint' }, `${label}: none.`);
  const size = body.size === null ? 'its size unknown' : `${body.size} bytes`;
  if (body.text === undefined) return h('p', { className: 'hint' }, `${label}: not text (${body.content_type ?? 'no type'}, ${size}), not kept.`);
  const cut = body.truncated ? `, cut: the first 64 KiB of ${size}` : '';
  return jsonBlock(`${label} (secrets masked${cut})`, /json/i.test(body.content_type ?? '') ? prettyJson(body.text) : body.text, key);
}

function contentOf(record) {
  const text = record.text;
  if (!text?.content) return [];
  return [jsonBlock('Prompt', text.content.prompt, `${record.request_id}-prompt`), jsonBlock('Output', text.content.output, `${record.request_id}-output`)];
}
