// Faults injected at run time: the rules in force with how many requests (or callbacks) each took and injected
// into, the form that adds any of them (fault-form.js), and buttons to remove one or all. Its start also wires the
// Scenarios panel's load form: both steer what the emulator does next, and app.js hands this part the api.
import { $, emptyRow, h, renderInto } from './dom.js';
import { CALLBACK_KINDS, startFaultForm } from './fault-form.js';
import { startScenarioForm } from './scenarios.js';

/** A rule's match in a few words: a callback fault's rule takes callbacks (of an event, an account), not requests. */
function matchText(rule) {
  const match = rule.match ?? {};
  if (CALLBACK_KINDS.has(rule.fault.kind)) {
    const which = match.event ? `${match.event} callbacks` : 'every callback';
    return match.account ? `${match.event ? which : 'callbacks'} of ${match.account}` : which;
  }
  return (
    Object.entries(match)
      .map(([name, value]) => `${name} ${value}`)
      .join(', ') || 'every request'
  );
}

/** A fault in a few words. */
function faultText(fault) {
  switch (fault.kind) {
    case 'error':
      return `error ${fault.code}${fault.retry_after !== undefined ? ` (Retry-After ${fault.retry_after} s)` : ''}`;
    case 'latency':
      return `${fault.ms} ms ${fault.between_chunks ? 'between events' : 'before the answer'}`;
    case 'cut':
      return `cut after ${fault.after_chunks} events`;
    case 'trickle':
      return `trickle at ${fault.bytes_per_second} bytes/s`;
    case 'delay':
      return `callback delayed ${fault.seconds} s (virtual)`;
    case 'duplicate':
      return 'callback delivered twice';
    case 'out_of_order':
      return 'callbacks out of order';
    case 'forged_signature':
      return 'forged callback first';
    default:
      return fault.kind.replaceAll('_', ' ');
  }
}

const howOften = (rule) =>
  [rule.times !== undefined ? `first ${rule.times}` : null, rule.probability !== undefined ? `${Math.round(rule.probability * 100)} %` : null].filter(Boolean).join(', ') ||
  'always';

export function createFaults({ api, actions }) {
  function render(rules) {
    renderInto($('faults-body'), JSON.stringify(rules), () =>
      rules.length === 0
        ? emptyRow(6, 'No fault rules: requests and callbacks go as the scenarios say.')
        : rules.map((rule) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, h('code', {}, rule.id)),
              h('td', {}, matchText(rule)),
              h('td', {}, faultText(rule.fault)),
              h('td', {}, howOften(rule)),
              h('td', { className: 'num' }, `${rule.hits} of ${rule.matched}`),
              h(
                'td',
                {},
                h(
                  'button',
                  {
                    type: 'button',
                    dataset: { focus: `remove-${rule.id}` },
                    onClick: (event) => actions.act(event.currentTarget, async () => (await api('DELETE', `/_emulator/faults/${rule.id}`), `Fault rule ${rule.id} removed.`)),
                  },
                  `Remove ${rule.id}`,
                ),
              ),
            ),
          ),
    );
  }

  function start() {
    startFaultForm({ api, actions });
    startScenarioForm({ api, actions });
    $('faults-clear').addEventListener('click', (event) =>
      actions.act(event.currentTarget, async () => {
        const { removed } = await api('DELETE', '/_emulator/faults');
        return `${removed} fault rule(s) removed.`;
      }),
    );
  }

  return { render, start };
}
