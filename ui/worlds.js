// The world picker in the header: which world of the emulator the signed-in page shows, its default world or one of
// its sessions (created with POST /_emulator/sessions). The choice is kept in this tab's sessionStorage.
/* global sessionStorage */
import { SESSIONS_PATH } from './api.js';
import { readOrNull } from './details.js';
import { $, h, renderInto } from './dom.js';
import { clearLink } from './links.js';

const WORLD_KEY = 'svc-emulator-world';

/** `My tests (ses_…)`, or the id alone when the session was given no name of its own. */
const sessionLabel = (s) => (s.name && s.name !== s.id ? `${s.name} (${s.id})` : s.id);

/**
 * Whose token lists these sessions (GET /_emulator/sessions): the id of the session it is the own admin token of
 * (`scope: 'session'`, a list of that session alone), or null for the emulator's (`scope: 'emulator'`, every session).
 */
const ownSessionOf = (list) => (list.scope === 'session' ? (list.data[0]?.id ?? null) : null);

/**
 * The world picker: "Default world" and every session with the emulator's admin token; with a session's own admin
 * token just that session, all the token reaches. Choosing one makes every control call name it (api.js), forgets
 * all that was read of the world before (`app.forgetWorld`) and reads the new one. A chosen session that is gone
 * takes the page back to the default world, with a message.
 */
export function createWorlds(app) {
  const { state, api, announce } = app;

  const labelOf = (id) => {
    const known = state.sessions.find((s) => s.id === id) ?? (state.overview?.id === id ? state.overview : null);
    return known ? sessionLabel(known) : id;
  };

  function render() {
    const sessions = state.sessions.filter((s) => !state.ownSession || s.id === state.ownSession).map((s) => ({ id: s.id, label: sessionLabel(s) }));
    const entries = state.ownSession ? sessions : [{ id: '', label: 'Default world' }, ...sessions];
    const select = $('world');
    // Rebuilt only when an entry changed: a rebuild would close the list if it were open.
    renderInto(select, JSON.stringify(entries), () => entries.map((s) => h('option', { value: s.id }, s.label)));
    select.value = state.world ?? state.ownSession ?? '';
  }

  /** Just signed in: which worlds the token reaches, and the tab's saved choice if its session is still there. Resolves with a note to announce, if any. */
  async function signedIn() {
    let note = '';
    state.ownSession = null;
    try {
      const list = await api('GET', SESSIONS_PATH);
      state.sessions = list.data;
      state.ownSession = ownSessionOf(list);
    } catch (error) {
      state.sessions = [];
      note = `Could not list the sessions: ${error.message}`;
    }
    const saved = sessionStorage.getItem(WORLD_KEY);
    state.world = saved && !state.ownSession && state.sessions.some((s) => s.id === saved) ? saved : null;
    if (saved && !state.world) {
      sessionStorage.removeItem(WORLD_KEY);
      if (!state.ownSession) note ||= `Session ${saved} no longer exists on this emulator: showing the default world.`;
    }
    render();
    return note;
  }

  function signedOut() {
    sessionStorage.removeItem(WORLD_KEY);
    Object.assign(state, { world: null, ownSession: null, sessions: [] });
  }

  /** Shows another world: `id` a session's, '' or null the default world. */
  function choose(id, { note, isError = false } = {}) {
    state.world = id || null;
    if (state.world) sessionStorage.setItem(WORLD_KEY, state.world);
    else sessionStorage.removeItem(WORLD_KEY);
    // Nothing of the world left stays on the page, not even in the address, which names its chosen item.
    app.forgetWorld();
    clearLink();
    render();
    announce(note ?? (state.world ? `Showing session ${labelOf(state.world)}.` : 'Showing the default world.'), isError);
    app.refresh();
  }

  const leave = (id) => choose(null, { note: `Session ${labelOf(id)} no longer exists on this emulator: showing the default world.`, isError: true });

  /**
   * A poll's read of the sessions, beside the world's own reads: the whole list every few polls (`wantList`), else
   * only the session shown (none for the default world). Never through a session's world (api.js).
   */
  async function read(wantList) {
    const shown = state.world ?? state.ownSession;
    const list = wantList ? (await api('GET', SESSIONS_PATH)).data : null;
    let view = null;
    if (shown && list) view = list.find((s) => s.id === shown) ?? null;
    else if (shown) view = await readOrNull(api, `${SESSIONS_PATH}/${encodeURIComponent(shown)}`);
    return { list, shown, view };
  }

  /** Takes in a poll's read; false when the session chosen is gone, and the page went back to the default world. */
  function show({ list, shown, view }) {
    if (list) state.sessions = list;
    if (shown && shown === state.world && view === null) {
      leave(shown);
      return false;
    }
    state.overview = view;
    render();
    return true;
  }

  /** After a 404 to a call that named session `id`: true when that session is gone, and the page went back to the default world. */
  async function leftGone(id) {
    if (!id || id !== state.world) return false;
    // Unreadable, it is said like any failed poll.
    const view = await readOrNull(api, `${SESSIONS_PATH}/${encodeURIComponent(id)}`).catch(() => undefined);
    if (view !== null || id !== state.world) return false;
    leave(id);
    return true;
  }

  function start() {
    $('world').addEventListener('change', (event) => choose(event.target.value));
  }

  return { signedIn, signedOut, read, show, leftGone, start };
}
