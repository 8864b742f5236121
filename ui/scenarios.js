// Scenarios in words: a task scenario by its seconds in the queue and in processing and how it ends; a text
// scenario (one with a `text` block, scenarios/text.yaml) by how its calls stream and end. Text calls have no
// queue: showing them task timings would say something the emulator never does. And the form that loads more
// from a pasted scenario file.
import { $, emptyRow, h, renderInto } from './dom.js';

export const isTextScenario = (s) => s.text !== undefined && s.text !== null;

/** What a scenario is for. */
export const scenarioKind = (s) => (isTextScenario(s) ? 'text calls' : 'tasks');

/** How it ends, in a few words. */
export function scenarioOutcome(s) {
  if (isTextScenario(s)) return textOutcome(s.text);
  return (
    s.outcome +
    (s.failure ? ` (${s.failure.code}${s.failure.during === 'queued' ? ', in the queue' : ''})` : '') +
    (s.cancelable_while_processing ? '; cancelable while processing' : '')
  );
}

function textOutcome(t) {
  if (t.reject) return 'rejected: 422 content_rejected, nothing charged';
  const parts = [];
  if (t.error_after_chunks !== undefined) parts.push(`error event ${t.error_code ?? 'service_unavailable'} after ${t.error_after_chunks} chunks, full refund`);
  if (t.max_output_tokens !== undefined) parts.push(`cut at ${t.max_output_tokens} tokens`);
  if (t.output_tokens !== undefined) parts.push(`a ${t.output_tokens}-token answer`);
  if (t.text !== undefined) parts.push(`a fixed answer of ${t.text.length} characters`);
  return parts.length > 0 ? parts.join('; ') : 'answers';
}

/** Its timing: text settings for a text scenario, seconds queued + processing for a task scenario. */
export function scenarioTiming(s) {
  if (isTextScenario(s)) return textTiming(s.text);
  const never = s.outcome === 'timeout' || (s.failure && s.failure.during === 'queued');
  const span = (t) => `${t.queue_seconds ?? s.queue_seconds ?? '–'} s + ${never ? '–' : `${t.processing_seconds ?? s.processing_seconds ?? '–'} s`}`;
  const perModel = Object.entries(s.per_model ?? {});
  if (perModel.length === 0) return `${span(s)} (queued + processing)`;
  return h(
    'ul',
    { className: 'plain' },
    h('li', {}, `${span(s)} (other models)`),
    ...perModel.map(([model, t]) => h('li', {}, `${span(t)} (${model})`)),
  );
}

function textTiming(t) {
  const first = t.first_token_ms ? `first token after ${t.first_token_ms} ms` : 'first token at once';
  const between = t.chunk_interval_ms ? `${t.chunk_interval_ms} ms between chunks` : 'no wait between chunks';
  return `${first}, ${between}`;
}

/** The scenarios in force, one row each. */
export function renderScenarios(scenarios) {
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

/**
 * Wires the load form: the pasted text goes to POST /_emulator/scenarios as YAML (JSON is YAML too), so the
 * parsing and the checks are those of a scenario file; a refusal is said in the header and loads nothing. The list
 * is read again at once: the poll reads it only now and then.
 */
export function startScenarioForm({ api, actions }) {
  $('scenario-form').addEventListener('submit', (event) => {
    event.preventDefault();
    actions.act(event.submitter ?? null, async () => {
      const { data } = await api('POST', '/_emulator/scenarios', $('scenario-yaml').value, { type: 'application/yaml' });
      renderScenarios((await api('GET', '/_emulator/scenarios')).data);
      return `Scenario${data.length === 1 ? '' : 's'} ${data.map((s) => s.name).join(', ')} loaded.`;
    });
  });
}
