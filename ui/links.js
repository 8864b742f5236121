// Addresses: the page shows one view at a time, named by the address's hash, so every view and every item has
// an address of its own and the browser's Back and Forward walk them: #overview (the first), #accounts, #tasks,
// #callbacks, #records, #scenarios, #faults, #verdict for a list or panel; #task=T…, #record=req_…,
// #delivery=msg_…, #account=acct_… for one item's page (its list's view, the list itself set aside).
/* global document, location, history, ResizeObserver, window */
import { $ } from './dom.js';

const VIEWS = ['overview', 'accounts', 'tasks', 'callbacks', 'records', 'scenarios', 'faults', 'verdict'];
/** The view each kind of item's page belongs to, and its word in the tab's title. */
const ITEMS = {
  task: { view: 'tasks', word: 'Task' },
  record: { view: 'records', word: 'Call' },
  delivery: { view: 'callbacks', word: 'Message' },
  account: { view: 'accounts', word: 'Account' },
};
const TITLE = 'svc-emulator dashboard';

/** What an address's hash names: `{kind, id}`, or null. */
export function linkOf(hash) {
  const match = /^#(task|record|delivery|account)=(.+)$/.exec(hash);
  if (!match) return null;
  try {
    return { kind: match[1], id: decodeURIComponent(match[2]) };
  } catch {
    return null;
  }
}

/** The view an address shows (`#tasks`, or `#tasks-heading` as the page's older addresses had it), and its item. */
export function routeOf(hash) {
  const item = linkOf(hash);
  if (item) return { view: ITEMS[item.kind].view, item };
  const name = hash.replace(/^#/, '').replace(/-heading$/, '');
  return { view: VIEWS.includes(name) ? name : 'overview', item: null };
}

let shown = null;
/** The address last shown: Back fires both popstate and hashchange, and one is enough. */
let followed = null;

/** Shows one view (one item's page when `item` is given), marks its section link, and names it in the tab's title. */
export function showView(view, item = null) {
  followed = location.hash;
  const key = item ? `${item.kind}=${item.id}` : view;
  if (shown === key) return;
  shown = key;
  for (const section of document.querySelectorAll('[data-view]')) {
    section.hidden = section.dataset.view !== view;
    section.classList.toggle('item-page', item !== null && section.dataset.view === view);
  }
  for (const link of document.querySelectorAll('nav a')) {
    if (link.getAttribute('href') === `#${view}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const heading = $(`${view}-heading`).textContent;
  document.title = item ? `${ITEMS[item.kind].word} ${item.id} · ${TITLE}` : `${heading} · ${TITLE}`;
  window.scrollTo(0, 0);
}

/** Opens a view from the page's own code (an overview count, say): a new history entry, as a link would make. */
export function goTo(view) {
  if (location.hash !== `#${view}`) history.pushState(null, '', `#${view}`);
  showView(view);
}

/** Puts the chosen item in the address (a new history entry, so Back goes to the page before) and shows its page. */
export function setLink(kind, id) {
  const hash = `#${kind}=${encodeURIComponent(id)}`;
  if (location.hash !== hash) history.pushState(null, '', hash);
  showView(ITEMS[kind].view, { kind, id });
}

/** Takes the chosen item out of the address (it named an item of a world no longer shown): its list is shown instead. */
export function clearLink() {
  const { view, item } = routeOf(location.hash);
  if (!item) return;
  history.replaceState(null, '', `${location.pathname}${location.search}#${view}`);
  showView(view);
}

/** Follows the address to what it names now (Back, Forward, a link), unless it is shown already. */
export function followAddress(choosers) {
  if (location.hash !== followed) openFromHash(choosers);
}

/** Shows what the address names, and opens its item if it names one: `choosers` holds a chooser per kind. */
export function openFromHash(choosers) {
  const { view, item } = routeOf(location.hash);
  if (item) choosers[item.kind](item.id, { fromLink: true });
  else showView(view);
}

/**
 * Brings a heading into view, on its own view (an overview's link to a list goes there): it takes the focus
 * (which scrolls only if it is out of sight); opened by a link, it goes to the top, just below the sticky header.
 */
export function reveal(headingId, fromLink = false) {
  const heading = $(headingId);
  const section = heading.closest('[data-view]');
  if (section && (section.hidden || section.classList.contains('item-page')) && !heading.closest('.item-part, .detail')) goTo(section.dataset.view);
  heading.focus({ preventScroll: fromLink });
  if (fromLink) heading.scrollIntoView({ block: 'start' });
}

/** Whatever scrolls into view (a focused heading, a section link) stops below the sticky header, however tall. */
export function keepBelowHeader() {
  new ResizeObserver(() => {
    document.documentElement.style.scrollPaddingTop = `${$('top').offsetHeight + 8}px`;
  }).observe($('top'));
}
