// Talking to the control API under /_emulator with the admin token, in the world the page shows, and reading its
// lists incrementally.
/* global fetch, URLSearchParams, TextEncoder */

export class ApiFailure extends Error {
  /** `session`: the session the call named in its X-Emulator-Session header, if any (a 404 may mean it is gone). */
  constructor(status, code, message, session = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.session = session;
  }
}

/** The header with which the emulator's admin token reaches one session's world instead of the default world. */
const SESSION_HEADER = 'X-Emulator-Session';

/** The emulator's sessions themselves: listed and read as the default world knows them, never through one. */
export const SESSIONS_PATH = '/_emulator/sessions';

const ENCODER = new TextEncoder();

/**
 * A client of the control API; `token()` gives the admin token of the moment, `world()` the id of the session the
 * page shows (null: the world the token reaches by itself). Its `traffic` counts the answers read so far and their
 * bytes, for the page's footer: a quiet emulator should cost a few per poll.
 *
 * Every call names the world shown in X-Emulator-Session (this is the one place that header is set) but those of
 * /_emulator/sessions: a session's world lists only itself there, and the picker needs every session.
 *
 * A body is sent as JSON, unless `type` names another media type: then it is a string sent as it is (a pasted
 * YAML scenario file).
 */
export function createApi(token, world = () => null) {
  const traffic = { bytes: 0, requests: 0 };
  async function api(method, path, body, { type } = {}) {
    const session = path.startsWith(SESSIONS_PATH) ? null : world();
    // Signed out while a refresh was under way: its later reads are not sent (they could only be refused).
    const bearer = token();
    if (!bearer) throw new ApiFailure(401, 'signed_out', 'Signed out.', session || null);
    // The header marks the dashboard's own calls: its polling reads are logged at debug, not info, and none of its
    // calls counts as a use of a session (for its idle time-to-live): watching a session does not keep it alive.
    const headers = { Authorization: `Bearer ${bearer}`, 'X-Emulator-Client': 'dashboard' };
    if (session) headers[SESSION_HEADER] = session;
    if (body !== undefined) headers['Content-Type'] = type ?? 'application/json';
    const res = await fetch(path, {
      method,
      headers,
      cache: 'no-store',
      ...(body !== undefined ? { body: type ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    traffic.bytes += ENCODER.encode(text).length;
    traffic.requests += 1;
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) {
      const error = data && data.error ? data.error : {};
      throw new ApiFailure(res.status, error.code ?? 'error', error.message ?? `HTTP ${res.status}`, session || null);
    }
    return data;
  }
  api.traffic = traffic;
  return api;
}

/** `?a=1&b=2` of the given values, leaving out empty ones. */
export const query = (params) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== '' && value != null) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};

/** The control API leaves out the rows whose versions are `known`; it takes at most this many. */
const MAX_KNOWN = 200;

/**
 * Reads one list of the control API (tasks, records, messages, accounts) a page at a time, sending the versions
 * of the rows it already holds: the answer carries only rows that are new or changed, and `versions` says where
 * each row of the page goes. Resolves with the whole page as `rows`.
 */
export function listReader(api, path) {
  let held = new Map(); // version → row, the rows of the last page read
  return async function read(params) {
    const known = [...held.keys()].slice(0, MAX_KNOWN);
    const answer = await api('GET', `${path}${query({ ...params, known: known.join(',') })}`);
    const sentKnown = new Set(known);
    const fresh = answer.data[Symbol.iterator]();
    const rows = answer.versions.map((version) => (sentKnown.has(version) ? held.get(version) : fresh.next().value));
    held = new Map(answer.versions.map((version, i) => [version, rows[i]]));
    return { ...answer, rows };
  };
}
