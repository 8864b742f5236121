// Faults injected at run time: the rules in force with how many requests each took and injected into, a form for
// the common ones (the next N errors of a code, latency, a reset), and buttons to remove one or all.
import { $, emptyRow, h, renderInto } from './dom.js';

/** A rule's match in a few words. */
const matchText = (match = {}) =>
  Object.entries(match)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ') || 'every request';

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
      return `${fault.bytes_per_second} bytes/s`;
    case 'delay':
      return `callback delayed ${fault.seconds} s`;
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
              h('td', {}, matchText(rule.match)),
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

  /** The rule the form describes. */
  function ruleOfForm() {
    const kind = $('fault-kind').value;
    const fault =
      kind === 'error'
        ? { kind, code: $('fault-code').value }
        : kind === 'latency'
          ? { kind, ms: Number($('fault-ms').value) }
          : { kind };
    const match = {};
    const path = $('fault-path').value.trim();
    if (path) match.path = path;
    const rule = { match, fault };
    const times = $('fault-times').value.trim();
    if (times) rule.times = Number(times);
    return rule;
  }

  function start() {
    const showFields = () => {
      const kind = $('fault-kind').value;
      $('fault-code-field').hidden = kind !== 'error';
      $('fault-ms-field').hidden = kind !== 'latency';
    };
    $('fault-kind').addEventListener('change', showFields);
    showFields();
    $('fault-form').addEventListener('submit', (event) => {
      event.preventDefault();
      actions.act(event.submitter ?? null, async () => {
        const { data } = await api('POST', '/_emulator/faults', { rules: [ruleOfForm()] });
        return `Fault rule ${data.map((r) => r.id).join(', ')} added.`;
      });
    });
    $('faults-clear').addEventListener('click', (event) =>
      actions.act(event.currentTarget, async () => {
        const { removed } = await api('DELETE', '/_emulator/faults');
        return `${removed} fault rule(s) removed.`;
      }),
    );
  }

  return { render, start };
}
