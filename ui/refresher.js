// Reading the emulator: one refresh at a time, and a poll every POLL_MS while signed in and the tab is shown.
/* global document, setTimeout, clearTimeout */

const POLL_MS = 1500;

/** `readOnce()` reads and renders everything once; `state.token` says whether to go on polling. */
export function createRefresher(state, readOnce) {
  let running = null;
  let rerun = false;

  /** One refresh at a time; a call during a refresh runs one more right after it, with the newest filters. */
  function refresh() {
    if (running) {
      rerun = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          rerun = false;
          await readOnce();
        } while (rerun && state.token);
      } finally {
        running = null;
      }
    })();
    return running;
  }

  /** From inside `readOnce`: read once more when this one is done (it found its pages out of date). */
  const again = () => {
    rerun = true;
  };

  function poll() {
    clearTimeout(state.timer);
    state.timer = setTimeout(async () => {
      if (document.visibilityState !== 'hidden') await refresh();
      if (state.token) poll();
    }, POLL_MS);
  }

  const stop = () => clearTimeout(state.timer);

  return { refresh, again, poll, stop };
}
