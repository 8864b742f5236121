// The overview atop the dashboard: the world shown, in a few facts.
import { clockText } from './clock.js';
import { $, duration, fact, h, renderInto, time } from './dom.js';

/** A store's size on disk, in words. */
const bytesText = (n) => (n === 0 ? 'in memory' : n < 10240 ? `${n} bytes on disk` : n < 10485760 ? `${Math.round(n / 1024)} KB on disk` : `${Math.round(n / 1048576)} MB on disk`);

/**
 * The world shown, in a few facts: a session's name, id, clock, sizes, when it was made and last used, and how long
 * it lasts unused (GET /_emulator/sessions/{id}, as `state.overview` holds it); for the default world, its clock as
 * read with the lists and how many sessions are beside it. Called on every poll. The page's own calls are no use of
 * a session (api.js), so its last use and expiry are the clients' and stand still while only the page reads it.
 */
export function renderOverview(state, clock) {
  const s = state.overview;
  const beside = state.ownSession ? null : state.sessions.length;
  renderInto($('overview-facts'), JSON.stringify([s, s ? null : clock, beside]), () =>
    s
      ? [
          fact('World', s.name),
          fact('Session', h('code', {}, s.id)),
          fact('Clock', [`${s.clock.mode}, ${clockText(s.clock)}, now `, time(s.clock.now)]),
          fact('Accounts', String(s.size.accounts)),
          fact('Tasks', String(s.size.tasks)),
          fact('Calls', String(s.size.calls)),
          fact('Callback messages', String(s.size.deliveries)),
          fact('Store', bytesText(s.size.bytes)),
          fact('Created', time(s.created_at)),
          fact('Last used by a client', time(s.last_used_at)),
          fact('Time-to-live', s.ttl_seconds === null ? 'none: it lasts until deleted' : `${duration(s.ttl_seconds)} without a client's request (this page's own do not count)`),
          fact('Expires', s.expires_at === null ? 'never' : time(s.expires_at)),
        ]
      : [
          fact('World', 'Default world'),
          fact('Reached by', "the emulator's own keys, and its admin token naming no session"),
          fact('Clock', [`${clock.mode}, ${clockText(clock)}, now `, time(clock.now)]),
          beside === null ? null : fact('Sessions beside it', beside === 0 ? 'none' : `${beside} (choose one in the World picker)`),
        ],
  );
}
