// The sticky header's "Last action" line: what the page did last, or why it could not.
import { $ } from './dom.js';

export function createMessages(state) {
  const announce = (message, isError = false) => {
    const status = $('status');
    status.textContent = message;
    status.classList.toggle('error', isError);
    status.classList.toggle('ok', !isError);
  };
  /** A failed poll, said once however many polls fail the same way. */
  const reportPollError = (error) => {
    const message = `Could not read the emulator: ${error.message}`;
    if (message !== state.lastError) announce(message, true);
    state.lastError = message;
  };
  return { announce, reportPollError };
}
