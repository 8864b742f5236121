// Building the page: elements from plain data, always as text (never parsed as HTML), and re-rendered only
// when what they show changed, so polling neither flickers nor pulls the keyboard focus away.
/* global document, CSS, TextEncoder */

export const $ = (id) => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`The page has no #${id}.`);
  return el;
};

/** h('td', {className: 'num'}, 'text', node, ...): an element; strings become text nodes, null and false nothing. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'className') el.className = value;
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name.startsWith('on')) el.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name in el && typeof value !== 'string') el[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  el.append(...nodes(children));
  return el;
}

/** Children as nodes: nested arrays flattened, null, undefined and false dropped (never written as "null"). */
function nodes(children) {
  return children
    .flat(Infinity)
    .filter((child) => child !== null && child !== undefined && child !== false)
    .map((child) => (typeof child === 'string' || typeof child === 'number' ? String(child) : child));
}

const signatures = new WeakMap();

/**
 * Replaces a container's children only when what it shows changed, and puts the keyboard focus back on the
 * control with the same data-focus key, and open <details> open again.
 */
export function renderInto(container, signature, build) {
  if (signatures.get(container) === signature) return;
  signatures.set(container, signature);
  const focused = document.activeElement;
  const focusKey = focused && container.contains(focused) ? focused.dataset.focus : undefined;
  const opened = new Set([...container.querySelectorAll('details[data-key]')].map((d) => `${d.dataset.key}:${d.open}`));
  container.replaceChildren(...nodes([build()]));
  for (const details of container.querySelectorAll('details[data-key]')) {
    if (opened.has(`${details.dataset.key}:true`)) details.open = true;
    else if (opened.has(`${details.dataset.key}:false`)) details.open = false;
  }
  if (focusKey) container.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`)?.focus();
}

/** Forgets what a container shows, so the next render rebuilds it. */
export const invalidate = (container) => signatures.delete(container);

/** The zone a time of the control API ends with: `+08:00` (or `Z`); empty for none. */
export const zoneOf = (iso) => /(?:Z|[+-]\d\d:\d\d)$/.exec(iso)?.[0] ?? '';

/** `2026-11-23 09:00:00 +08:00`: every time on the page says its zone, the emulator's clock being no one's local time. */
export const plainTime = (iso) => iso.replace('T', ' ').replace(/(Z|[+-]\d\d:\d\d)$/, ' $1');

export const time = (iso) => (iso ? h('time', { datetime: iso }, plainTime(iso)) : '–');

/** `09:00:05 +08:00`: a time of the day, for a table's cell, its zone still said. */
export const shortTime = (iso) => (iso ? h('time', { datetime: iso }, `${iso.slice(11, 19)} ${zoneOf(iso)}`.trim()) : '–');

/** Epoch milliseconds as a time of the control API's form, in the zone given as `+08:00` (UTC for any other). */
export function isoAt(ms, zone) {
  const match = /^([+-])(\d\d):(\d\d)$/.exec(zone);
  const offsetMs = match ? (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) * 60_000 : 0;
  return `${new Date(ms + offsetMs).toISOString().slice(0, 19)}${match ? zone : 'Z'}`;
}

export const seconds = (fromIso, toIso) => Math.round((Date.parse(toIso) - Date.parse(fromIso)) / 1000);

export const duration = (s) => {
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.floor(s / 60)} min ${s % 60 ? `${s % 60} s` : ''}`.trim();
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
};

export const statusBadge = (status) => h('span', { className: `badge badge-${status}` }, status);

export const emptyRow = (columns, text) => h('tr', {}, h('td', { colSpan: columns, className: 'empty' }, text));

export const fact = (name, value) => h('div', {}, h('dt', {}, name), h('dd', {}, value));

const BYTES = new TextEncoder();

/**
 * A value as indented JSON in a collapsible block, open unless large (or `open` says). `key` keeps it open or
 * closed as the user left it across re-renders.
 */
export function jsonBlock(label, value, key, { open } = {}) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  const size = BYTES.encode(text).length;
  return h(
    'details',
    { className: 'payload', open: open ?? size <= 4096, dataset: { key } },
    h('summary', {}, `${label} `, h('span', { className: 'hint' }, `(${size} bytes)`)),
    h('pre', { className: 'code', tabIndex: 0, 'aria-label': label }, text),
  );
}

/** A string that holds JSON, shown indented; anything else as it is. */
export function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A button that looks like a link and chooses something (a task, a record, a message, an account). */
export function chooser(label, { pressed, focus, onChoose, title }) {
  return h('button', { type: 'button', className: 'link', title, 'aria-pressed': String(pressed), dataset: { focus }, onClick: onChoose }, label);
}

/** Pager buttons of a list: the page number, and the buttons to move (marked, not disabled, at the ends). */
export function pager(container, { page, hasMore, previous, next, onMove }) {
  renderInto(container, JSON.stringify([page, hasMore]), () => [
    h('button', { type: 'button', 'aria-disabled': String(page <= 1), dataset: { focus: 'previous' }, onClick: () => page > 1 && onMove(page - 1) }, previous),
    h('span', { className: 'page' }, `Page ${page}`),
    h('button', { type: 'button', 'aria-disabled': String(!hasMore), dataset: { focus: 'next' }, onClick: () => hasMore && onMove(page + 1) }, next),
  ]);
}
