// Details: the chosen task, call record or callback message below its list. Each kind's page elements are
// <kind>-heading, <kind>-none (the hint shown until one is chosen) and <kind>-detail; its slot in the state
// holds what was last read of it (store.js).
import { ApiFailure } from './api.js';
import { $, invalidate } from './dom.js';
import { reveal, setLink } from './links.js';
import { emptySlot } from './store.js';

/** A single item of the control API, or null when it is gone (a reset, or a link to something that never was). */
export async function readOrNull(api, path) {
  try {
    return await api('GET', path);
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 404) return null;
    throw error;
  }
}

/**
 * The chosen item of a slot as it is now. It is read again only when its row in `list` changed version, or the
 * page shown does not hold it, so a quiet poll reads none. Undefined when none is chosen, or another was chosen
 * meanwhile; null when it is gone.
 */
export async function readHeld(state, kind, list, { keyOf, read }) {
  const { id, item: held, version: heldVersion } = state[kind];
  if (!id) return undefined;
  const i = list.rows.findIndex((row) => keyOf(row) === id);
  const version = i === -1 ? null : list.versions[i];
  const item = held && version !== null && version === heldVersion ? held : await read(id);
  if (state[kind].id !== id) return undefined;
  state[kind] = { id, item, version };
  return item;
}

/**
 * `specs` holds, for each kind of detail, its heading's word, the lists that mark the chosen item, the id of a
 * list's row, and how the item is read (null when it is gone).
 */
export function createDetails({ state, refresh }, specs) {
  // Each heading's words while nothing is chosen, as the page has them.
  const headings = Object.fromEntries(Object.keys(specs).map((kind) => [kind, $(`${kind}-heading`).textContent]));

  /** Opens an item in its detail, names it in the address, and reads it at once. */
  function choose(kind, id, { fromLink = false } = {}) {
    if (state[kind].id !== id) state[kind] = emptySlot(id);
    const { title, lists } = specs[kind];
    $(`${kind}-heading`).textContent = `${title} ${id}`;
    $(`${kind}-none`).hidden = true;
    $(`${kind}-detail`).hidden = false;
    for (const list of lists) invalidate($(list));
    setLink(kind, id);
    reveal(`${kind}-heading`, fromLink);
    refresh();
  }
  const readChosen = (kind, list) => readHeld(state, kind, list, specs[kind]);

  /** Closes every detail, as when nothing was chosen yet: what they showed was read in a world no longer shown. */
  function closeAll() {
    for (const kind of Object.keys(specs)) {
      $(`${kind}-heading`).textContent = headings[kind];
      $(`${kind}-none`).hidden = false;
      $(`${kind}-detail`).hidden = true;
    }
  }
  return { choose, readChosen, closeAll };
}
