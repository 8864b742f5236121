// The clock of the world shown, in the sticky header: now, its mode, its speed, and the buttons that move it.
/* global document */
import { $, duration, plainTime, renderInto, time } from './dom.js';

/** How a clock runs, in words (the header's, and the world overview's). */
export const clockText = (clock) => (clock.mode === 'real' ? `${clock.speed}× wall time` : 'stands still until advanced');

export function createClock({ state, api, announce, actions }) {
  function render(clock) {
    state.clockNow = clock.now;
    renderInto($('clock-now'), clock.now, () => time(clock.now));
    $('clock-mode').textContent = clock.mode;
    $('clock-speed').textContent = clockText(clock);
    // Only a real clock has a speed to set.
    $('clock-speed-form').hidden = clock.mode !== 'real';
  }

  const advance = (secondsToAdvance, button) =>
    actions.act(button, async () => {
      const result = await api('POST', '/_emulator/clock/advance', { seconds: secondsToAdvance });
      return `Clock advanced ${duration(secondsToAdvance)} to ${plainTime(result.now)}.`;
    });

  function start() {
    for (const button of document.querySelectorAll('[data-advance]')) {
      button.addEventListener('click', () => advance(Number(button.dataset.advance), button));
    }
    $('clock-speed-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const speed = Number($('clock-speed-input').value);
      if (!(speed > 0)) return announce('Give the speed as a number above 0.', true);
      actions.act(event.submitter ?? null, async () => {
        const result = await api('POST', '/_emulator/clock/speed', { speed });
        return `The clock now runs ${result.speed}× wall time.`;
      });
    });
    $('advance-custom').addEventListener('submit', (event) => {
      event.preventDefault();
      const value = Number($('advance-seconds').value);
      if (!Number.isFinite(value) || value < 0) return announce('Give the seconds to advance as a number of 0 or more.', true);
      advance(value, event.submitter ?? null);
    });
  }

  return { render, start };
}
