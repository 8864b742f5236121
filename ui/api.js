// Talking to the control API under /_emulator with the admin token, and reading its lists incrementally.
/* global fetch, URLSearchParams, TextEncoder */

export class ApiFailure extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const ENCODER = new TextEncoder();

/**
 * A client of the control API; `token()` gives the admin token of the moment. Its `traffic` counts the answers
 * read so far and their bytes, for the page's footer: a quiet emulator should cost a few per poll.
 */
export function createApi(token) {
  const traffic = { bytes: 0, requests: 0 };
  async function api(method, path, body) {
    // The header marks the dashboard's own calls: its polling reads are logged at debug, not info.
    const headers = { Authorization: `Bearer ${token()}`, 'X-Emulator-Client': 'dashboard' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, {
      method,
      headers,
      cache: 'no-store',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
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
      throw new ApiFailure(res.status, error.code ?? 'error', error.message ?? `HTTP ${res.status}`);
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
