/**
 * Secrets on the wire, found and replaced as pure functions over text: credential headers whole, and anywhere in
 * URLs, headers and bodies the strings that look like a secret (API keys, signing secrets, callback secrets, bearer
 * tokens, secret-named query parameters, the userinfo of an address). A recording, a curl line and a report all
 * hide them the same way.
 * @see reference "Authentication", "Events" (callback signing)
 */

/** The marker that stands for a credential header's whole value. */
export const REDACTED = '[redacted]';

/**
 * Headers whose value is a credential or part of a signature, replaced whole: the API key (Authorization,
 * x-api-key), cookies, the request-signing trio, the Standard Webhooks trio of a callback (and its `svix-` form).
 */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  'x-svc-timestamp',
  'x-svc-nonce',
  'x-svc-signature',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'svix-id',
  'svix-timestamp',
  'svix-signature',
]);
/**
 * A word of a name that says it holds a credential: headers (`X-Admin-Token`, `X-Authorization`), query
 * parameters (`api_key`, `client_secret`, `X-Amz-Security-Token`). Words are split at `-`, `_` and `.`, so
 * `keyword` or `x-ratelimit-remaining-tokens` are not one.
 */
const SECRET_WORD = 'token|secret|signature|sig|password|passwd|pwd|api[-_]?key|apikey|auth|authorization|authentication|credentials?|session';
/** Any other header named like a credential. */
const SECRET_HEADER_NAME = new RegExp(`(^|[-_.])(${SECRET_WORD})([-_.]|$)`, 'i');
/** A query parameter named like a credential (`key` alone counts in a query: `?key=...` is a common API key). */
const SECRET_PARAM = String.raw`(?:[A-Za-z0-9]+[-_.])*(?:key|${SECRET_WORD})(?:[-_.][A-Za-z0-9]+)*`;
/**
 * Where a parameter starts and where its value does: plain, URL-encoded (an address inside another's query,
 * `?callback=https%3A%2F%2Fh%3Ftoken%3D...`) or JSON-escaped (`\u0026`, as Go's encoder writes `&`).
 */
const PARAM_START = String.raw`(?:[?&]|%3F|%26|\\u0026|\\u003f)`;
const PARAM_EQUALS = String.raw`(?:=|%3D|\\u003d)`;

/** A character of an address's userinfo, in any of the forms below: not an at-sign, nor the end of the authority. */
const USERINFO_CHAR = String.raw`(?:(?!%2F|%3F|%23|%40)[^/?#\s"'<>\\@])`;
const AT_SIGN = String.raw`(?:@|%40|\\u0040)`;
/**
 * The userinfo of an address (`https://user:secret@host/`, RFC 3986 §3.2.1: a password, or a token as the user),
 * written plain, URL-encoded (an address inside a query value: `https%3A%2F%2Fuser%3Asecret%40host`) or
 * JSON-escaped (`https:\/\/`, `\u0040`). Group 1 is the scheme's end and `//`, group 2 the userinfo up to its last
 * at-sign (a password may hold an unencoded `@`, as WHATWG's parser reads it), group 3 that at-sign. The authority
 * ends at `/`, `?`, `#` (or their encodings), so an `@` in a path or a query is not one. Any scheme: `postgres://`,
 * `redis://` too.
 */
const USERINFO = new RegExp(String.raw`([A-Za-z0-9+.-](?::|%3A)(?:\/\/|%2F%2F|\\\/\\\/))(?!${AT_SIGN})((?:${USERINFO_CHAR}*${AT_SIGN})*${USERINFO_CHAR}*)(${AT_SIGN})`, 'gi');

/** Secret-looking strings and what replaces each (a marker that says what was there). */
const SECRET_PATTERNS: [RegExp, string][] = [
  // A password in an address, replaced whole with its user name: the host and path stay and the address still
  // parses. First, so a key-looking password is one secret with the rest of its userinfo.
  [USERINFO, `$1${REDACTED}$3`],
  // A secret in a query (a callback address with ?token=...); before the tokens, so a bearer token as a value is
  // one secret.
  // An encoded value ends at an encoded `&`.
  [new RegExp(`(${PARAM_START}${SECRET_PARAM}${PARAM_EQUALS})(?:(?!%26)[^&#\\s"'\\\\<>])+`, 'gi'), `$1${REDACTED}`],
  // The scheme is case-insensitive on the wire, but "bearer" in prose is common: only the written-out scheme.
  // Also URL- or form-encoded (`Bearer%20...`, `Bearer+...`) in an address.
  [/\bBearer(?:[ \t]+|%20|\+)[A-Za-z0-9._~+/-]+=*/g, '[redacted bearer token]'],
  // Callback signing secrets (Standard Webhooks: whsec_ and Base64).
  [/\bwhsec_[A-Za-z0-9+/=_-]+/g, 'whsec_[redacted]'],
  // Request-signing secrets of a key (src/keys/manage.ts: svs_ and 40 letters or digits).
  [/\bsvs_[A-Za-z0-9_-]+/g, 'svs_[redacted]'],
  // API keys: `sk-` and a secret string (src/random/ids.ts: 40 letters or digits; a seeded key may have dashes).
  [/(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{8,}/g, 'sk-[redacted]'],
];

/** The text with every secret-looking string replaced; `changed` when there was one. */
export function redactSecrets(text: string): { text: string; changed: boolean } {
  let out = text;
  for (const [pattern, marker] of SECRET_PATTERNS) out = out.replace(pattern, marker);
  return { text: out, changed: out !== text };
}

/** A header whose value is a credential (or part of a signature), by its name. */
export const isSecretHeader = (name: string): boolean => SECRET_HEADERS.has(name.toLowerCase()) || SECRET_HEADER_NAME.test(name);
