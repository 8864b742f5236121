// Signing in and out with the admin token. "Session" in this file's name means the sign-in; an emulator's session
// is called so in full (the world picker is worlds.js).
//
// The page stores no token: it holds it in memory, and the emulator keeps the sign-in for this browser while it
// runs (POST /_emulator/ui/sign-in sets an HttpOnly cookie of an opaque handle, for that path only), so that a
// reload or a link opened in a new tab signs in without asking. No script can read the cookie, and the emulator
// gives the token back only to a same-origin request of this page: a served file, shown in an opaque origin, can
// reach neither.
/* global fetch, sessionStorage */
import { ApiFailure } from './api.js';
import { $ } from './dom.js';

/** Where an earlier version of the page kept the token: removed, so none is left in storage. */
const OLD_TOKEN_KEY = 'svc-emulator-admin-token';
const SIGN_IN = '/_emulator/ui/sign-in';
const SIGNED_IN = ['session', 'dashboard', 'nav', 'clock'];
const SIGNED_OUT = ['login', 'signed-out'];

/** The sign-in this browser holds with the emulator: its token, or null (none, or the emulator restarted). */
async function keptToken() {
  try {
    const res = await fetch(SIGN_IN, { headers: { 'X-Emulator-Client': 'dashboard' }, cache: 'no-store', credentials: 'same-origin' });
    if (!res.ok) return null;
    const body = await res.json();
    return typeof body.token === 'string' ? body.token : null;
  } catch {
    return null;
  }
}

const forgetKept = () => fetch(SIGN_IN, { method: 'DELETE', headers: { 'X-Emulator-Client': 'dashboard' }, credentials: 'same-origin' }).catch(() => undefined);

/**
 * `app`: the state, the api, the header's `announce`, the refresher, and (read when used) the world picker and
 * `forgetWorld`; `opened()` opens what the address names.
 */
export function createSession(app, opened) {
  const { state, api, announce, refresher } = app;

  // Counts sign-ins and sign-outs: a sign-in that a sign-out overtook (a click while it was reading) stops there.
  let turn = 0;

  async function signIn(token, { quiet = false } = {}) {
    const mine = ++turn;
    const current = () => mine === turn;
    state.token = token;
    // The token is checked in the world it reaches by itself; the picker's choice comes after.
    state.world = null;
    try {
      await api('GET', '/_emulator/clock');
    } catch (error) {
      if (!current()) return false;
      state.token = null;
      if (error instanceof ApiFailure && error.status === 401) {
        if (quiet) await forgetKept();
        else announce('The emulator refused that token. Check the admin token it was started with.', true);
      } else {
        announce(`Could not reach the emulator: ${error.message}`, true);
      }
      return false;
    }
    // Kept for the next tab; a failure to keep it costs only a sign-in there.
    if (!quiet) await api('POST', SIGN_IN).catch(() => undefined);
    if (!current()) return false;
    for (const id of SIGNED_OUT) $(id).hidden = true;
    for (const id of SIGNED_IN) $(id).hidden = false;
    const note = await app.worlds.signedIn();
    if (!current()) return false;
    // Whatever an earlier sign-in of this tab read is forgotten: this token may reach other worlds.
    app.forgetWorld();
    opened();
    await refresher.refresh();
    if (!current()) return false;
    if (note) announce(note, true);
    else if (!quiet) announce('Signed in.');
    refresher.poll();
    return true;
  }

  function signOut(message) {
    // A token the emulator refused is no use to another tab either; one signed out, the user meant every tab.
    forgetKept();
    turn += 1;
    app.worlds.signedOut();
    state.token = null;
    // A refresh under way is not shown: what it read belongs to the token just given up.
    app.forgetWorld();
    refresher.stop();
    for (const id of SIGNED_OUT) $(id).hidden = false;
    for (const id of SIGNED_IN) $(id).hidden = true;
    announce(message, message !== 'Signed out.');
    $('token').focus();
  }

  /** The sign-in form and the sign-out button; then signs in with the sign-in the emulator kept, if any. */
  async function start() {
    $('login').addEventListener('submit', async (event) => {
      event.preventDefault();
      const input = $('token');
      const token = input.value.trim();
      if (!token) return;
      if (await signIn(token)) {
        input.value = '';
        $('main').focus();
      } else {
        input.focus();
        input.select();
      }
    });
    $('logout').addEventListener('click', () => signOut('Signed out.'));
    sessionStorage.removeItem(OLD_TOKEN_KEY);
    const kept = await keptToken();
    if (kept) signIn(kept, { quiet: true });
  }

  return { signIn, signOut, start };
}
