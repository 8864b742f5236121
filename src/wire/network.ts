/**
 * Why a request got no answer at all, said for people from the error's cause code: fetch itself only says
 * `fetch failed`, the same words for a server that is down, a name that does not resolve and a bad certificate.
 */
export function unreachableReason(err: unknown, timeoutMs: number): string {
  const error = err as { name?: string; message?: string; cause?: { code?: string; message?: string; hostname?: string } };
  if (error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const code = error.cause?.code ?? '';
  const said = SAID[code];
  if (said) return said;
  if (/^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_)/.test(code) || /certificate|ssl|tls/i.test(error.cause?.message ?? '')) {
    return `TLS error: ${code || error.cause?.message}`;
  }
  const detail = error.cause?.message ?? error.message ?? String(err);
  return code && !detail.includes(code) ? `${detail} (${code})` : detail;
}

const SAID: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'DNS lookup failed: no such host',
  EAI_AGAIN: 'DNS lookup failed: the name server did not answer',
  EAI_FAIL: 'DNS lookup failed',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'the connection closed before an answer',
};
