// Signing in and out with the admin token, kept in this tab's sessionStorage only. "Session" in this file's name
// means the sign-in; an emulator's session is called so in full (the world picker is worlds.js).
/* global sessionStorage */
import { ApiFailure } from './api.js';
import { $ } from './dom.js';

const TOKEN_KEY = 'svc-emulator-admin-token';
const SIGNED_IN = ['session', 'dashboard', 'nav', 'clock'];
const SIGNED_OUT = ['login', 'signed-out'];

/**
 * `app`: the state, the api, the header's `announce`, the refresher, and (read when used) the world picker and
 * `forgetWorld`; `opened()` opens what the address names.
 */
export function createSession(app, opened) {
  const { state, api, announce, refresher } = app;

  async function signIn(token, { quiet = false } = {}) {
    state.token = token;
    // The token is checked in the world it reaches by itself; the picker's choice comes after.
    state.world = null;
    try {
      await api('GET', '/_emulator/clock');
    } catch (error) {
      state.token = null;
      if (error instanceof ApiFailure && error.status === 401) {
        sessionStorage.removeItem(TOKEN_KEY);
        if (!quiet) announce('The emulator refused that token. Check the admin token it was started with.', true);
      } else {
        announce(`Could not reach the emulator: ${error.message}`, true);
      }
      return false;
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    for (const id of SIGNED_OUT) $(id).hidden = true;
    for (const id of SIGNED_IN) $(id).hidden = false;
    const note = await app.worlds.signedIn();
    // Whatever an earlier sign-in of this tab read is forgotten: this token may reach other worlds.
    app.forgetWorld();
    opened();
    await refresher.refresh();
    if (note) announce(note, true);
    else if (!quiet) announce('Signed in.');
    refresher.poll();
    return true;
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    app.worlds.signedOut();
    state.token = null;
    refresher.stop();
    for (const id of SIGNED_OUT) $(id).hidden = false;
    for (const id of SIGNED_IN) $(id).hidden = true;
    announce(message, message !== 'Signed out.');
    $('token').focus();
  }

  /** The sign-in form and the sign-out button; then signs in again with the token this tab kept, if any. */
  function start() {
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
    const saved = sessionStorage.getItem(TOKEN_KEY);
    if (saved) signIn(saved, { quiet: true });
  }

  return { signIn, signOut, start };
}
