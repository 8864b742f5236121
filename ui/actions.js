// Actions: one control call at a time per button, said in the header, followed by a refresh; and list pagers.
/* global navigator, window */
import { ApiFailure } from './api.js';
import { $, pager } from './dom.js';

export function createActions({ state, announce, signOut, refresh }) {
  const busy = new WeakSet();

  /**
   * Runs one control call, says what happened in the header, and refreshes at once. The button is marked busy
   * rather than disabled while the call runs: a disabled button would drop the keyboard focus. `run` resolves with
   * what to say, or with `{ message, failed }`: a call that went well can bring news of a failure (a verdict with a
   * failed check), which is said as a failure is, never in the colour of success.
   */
  async function act(button, run) {
    if (button) {
      if (busy.has(button)) return;
      busy.add(button);
      button.setAttribute('aria-busy', 'true');
    }
    try {
      const said = await run();
      if (typeof said === 'object' && said !== null) announce(said.message, said.failed === true);
      else announce(said);
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 401) return signOut('The emulator no longer accepts the token; sign in again.');
      announce(error instanceof ApiFailure ? `Refused: ${error.status} ${error.code}: ${error.message}` : String(error), true);
    } finally {
      if (button) {
        busy.delete(button);
        button.removeAttribute('aria-busy');
      }
    }
    await refresh();
  }

  /** The pager below a list: another page is read at once. */
  function listPager(name, list, previous, next) {
    const onMove = (page) => {
      state.pages[name] = page;
      refresh();
    };
    pager($(`${name}-pager`), { page: list.page, hasMore: list.has_more, previous, next, onMove });
  }

  return { act, listPager };
}

/** Copies `text` to the clipboard; without clipboard access, selects `shown` to copy by hand. True when copied. */
export async function copyText(text, shown) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Without clipboard access (an insecure origin, a denied permission) the text is selected to copy by hand.
    window.getSelection()?.selectAllChildren(shown);
    return false;
  }
}
