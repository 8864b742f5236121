// Deep links: #task=T…, #record=req_…, #delivery=msg_…, #account=acct_… open that item; choosing one updates it.
/* global document, location, history, ResizeObserver */
import { $ } from './dom.js';

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

/** Puts the chosen item in the address (a new history entry, so Back goes to the item before). */
export function setLink(kind, id) {
  const hash = `#${kind}=${encodeURIComponent(id)}`;
  if (location.hash !== hash) history.pushState(null, '', hash);
}

/** Takes the chosen item out of the address: it named an item of a world no longer shown. */
export function clearLink() {
  if (location.hash) history.replaceState(null, '', `${location.pathname}${location.search}`);
}

/** Opens what the address names, if it names something: `choosers` holds a chooser per kind. */
export function openFromHash(choosers) {
  const link = linkOf(location.hash);
  if (link) choosers[link.kind](link.id, { fromLink: true });
}

/**
 * Brings a detail into view: its heading takes the focus (which scrolls only if it is out of sight); opened by a
 * link, the heading goes to the top, just below the sticky header.
 */
export function reveal(headingId, fromLink = false) {
  const heading = $(headingId);
  heading.focus({ preventScroll: fromLink });
  if (fromLink) heading.scrollIntoView({ block: 'start' });
}

/** Whatever scrolls into view (a focused heading, a section link) stops below the sticky header, however tall. */
export function keepBelowHeader() {
  new ResizeObserver(() => {
    document.documentElement.style.scrollPaddingTop = `${$('top').offsetHeight + 8}px`;
  }).observe($('top'));
}
