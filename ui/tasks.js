// Tasks: the list of every account's tasks, and the chosen one with its timeline, payloads, actions and callbacks.
import { listReader } from './api.js';
import { readOrNull } from './details.js';
import { $, chooser, duration, emptyRow, fact, h, jsonBlock, renderInto, seconds, statusBadge, time, zoneOf } from './dom.js';
import { outputOf } from './outputs.js';

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
const ACTIONS = ['advance', 'complete', 'fail', 'cancel'];

export const pointsText = (p) => `${p.frozen} / ${p.charged} / ${p.refunded}`;
const pointsOf = (task) => `frozen ${task.points.frozen}, charged ${task.points.charged}, refunded ${task.points.refunded}`;

/** `app.details` and `app.callbacks` are read when used: the parts are made in any order. */
export function createTasks(app) {
  const { state, api, actions, announce } = app;
  // The chosen task's callback messages, read with the versions held like any list; a new one for another task.
  let deliveries = listReader(api, '/_emulator/webhooks/deliveries');

  /** The detail's spec (details.js). */
  const detail = {
    title: 'Task',
    lists: ['tasks-body', 'ledger-body', 'records-body', 'callbacks-body'],
    keyOf: (entry) => entry.task.id,
    read: (id) => readOrNull(api, `/_emulator/tasks/${encodeURIComponent(id)}`),
  };

  /** A task's id as a button that opens it; `where` keeps the keyboard focus on it across renders. */
  const button = (id, where) => chooser(id, { pressed: id === state.task.id, focus: `${where}-task-${id}`, onChoose: () => choose(id) });

  function choose(id, options) {
    if (state.task.id !== id) deliveries = listReader(api, '/_emulator/webhooks/deliveries');
    app.details.choose('task', id, options);
  }

  function render(list, filters) {
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
              h('th', { scope: 'row' }, button(task.id, 'tasks')),
              h('td', {}, h('code', {}, account_id)),
              h('td', {}, task.model),
              h('td', {}, scenario),
              h('td', {}, statusBadge(task.status)),
              h('td', {}, compactTimeline(task)),
              h('td', { className: 'num' }, pointsText(task.points)),
            ),
          ),
    );
    actions.listPager('tasks', list, 'Newer tasks', 'Older tasks');
  }

  async function refreshChosen(tasks) {
    const entry = await app.details.readChosen('task', tasks);
    if (entry === undefined) return;
    const { id } = state.task;
    const messages = entry ? await deliveries({ task_id: id, limit: 100 }) : { rows: [] };
    if (state.task.id !== id) return;
    renderChosen(entry, messages.rows);
  }

  function renderChosen(entry, messages) {
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
    renderInto($('task-payloads'), JSON.stringify([task.id, task.status, task.input, task.output, task.error, task.metadata]), () => [
      jsonBlock('Input', task.input, `${task.id}-input`),
      outputOf(task),
      task.error ? jsonBlock('Error', task.error, `${task.id}-error`) : null,
      Object.keys(task.metadata ?? {}).length > 0 ? jsonBlock('Metadata', task.metadata, `${task.id}-metadata`) : null,
    ]);
    // aria-disabled keeps the buttons focusable (and the focus where it was) once the task has finished.
    const finished = TERMINAL.has(task.status);
    for (const action of ACTIONS) $(`task-${action}`).setAttribute('aria-disabled', String(finished));
    renderInto($('deliveries'), JSON.stringify([messages, state.clockNow]), () =>
      messages.length === 0 ? h('p', { className: 'hint' }, 'No callback messages for this task.') : messages.map((d) => app.callbacks.block(d, 'task')),
    );
  }

  function steer(action) {
    const id = state.task.id;
    if (!id) return;
    const path = `/_emulator/tasks/${encodeURIComponent(id)}/${action}`;
    const target = $(`task-${action}`);
    if (target.getAttribute('aria-disabled') === 'true' && state.task.item) {
      announce(`Task ${id} is already ${state.task.item.task.status}.`, true);
      return;
    }
    actions.act(target, async () => {
      if (action === 'fail') {
        const code = $('fail-code').value;
        const task = await api('POST', path, { code });
        return `Task ${id} failed with ${code}: ${pointsOf(task)}.`;
      }
      const task = await api('POST', path, action === 'complete' ? {} : undefined);
      return `Task ${id} is ${task.status}: ${pointsOf(task)}.`;
    });
  }

  function start() {
    for (const action of ACTIONS) $(`task-${action}`).addEventListener('click', () => steer(action));
  }

  return { detail, button, choose, render, refreshChosen, start };
}

function compactTimeline(task) {
  const short = (iso) => (iso ? iso.slice(11, 19) : '…');
  const parts = [short(task.created_at), short(task.started_at)];
  if (task.finished_at || !task.started_at) parts.push(short(task.finished_at));
  // One zone for the three: the emulator gives every time in its own.
  return h('span', { className: 'timeline-compact' }, `${parts.join(' → ')} ${zoneOf(task.created_at)}`.trim());
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
