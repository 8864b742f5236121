import type { Request, RequestHandler } from 'express';
import { ApiError } from '../errors/index.ts';
import type { AppConfig } from './context.ts';

/** Names a request may always be addressed to: this machine's loopback, which no other site can claim. */
const LOOPBACK: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** `--allowed-hosts '*'`: every Host is answered (no guard against DNS rebinding). */
export const ANY_HOST = '*';

/** A request target in absolute form (`http://host/v1/tasks`), whose authority is the request's host. */
const ABSOLUTE = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i;

/**
 * The host name of an authority (`name`, `name:port`, `[v6]:port`), lower-cased, IPv6 in brackets; null when
 * it is no host with an optional port.
 */
export function hostNameOf(authority: string): string | null {
  const text = authority.toLowerCase();
  const end = text.startsWith('[') ? text.indexOf(']') + 1 : text.includes(':') ? text.indexOf(':') : text.length;
  if (end <= 0) return null;
  const port = text.slice(end);
  if (port !== '' && !/^:[0-9]{0,5}$/.test(port)) return null;
  const name = text.slice(0, end);
  return /^(\[[0-9a-f:.]+\]|[a-z0-9._~-]+)$/.test(name) ? name : null;
}

/** The address a connection arrived at, as a Host names it: `127.0.0.1`, `[::1]` (an IPv4-mapped one unwrapped). */
function localNameOf(req: Request): string | undefined {
  const address = req.socket.localAddress;
  if (address === undefined || !address.includes(':')) return address;
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : `[${address.toLowerCase()}]`;
}

/**
 * The guard against DNS rebinding, first on every path (/v1, /_emulator, the dashboard, /files): a request must
 * be addressed to a host this emulator answers, else 421 host_not_allowed in the path's error shape. Answered:
 * localhost, 127.0.0.1, [::1], the address the connection arrived at, the host of the public URL and the names
 * of `--allowed-hosts` (`*`: any). The port is not compared: the browser always sends the one it connected to,
 * so it tells nothing of the page, and a port forwarder (`ssh -L`, a container's published port) changes it.
 * A request naming no host (HTTP/1.0 without Host) is answered: no browser sends one.
 * @see docs/reference/security.md
 */
export function hostCheck(config: Pick<AppConfig, 'allowedHosts' | 'publicUrl'>): RequestHandler {
  if (config.allowedHosts.includes(ANY_HOST)) return (_req, _res, next) => next();
  const named = new Set([...LOOPBACK, ...config.allowedHosts.map((host) => host.toLowerCase())]);
  // The public URL is read on each request (it is the listening address until `listen` has bound one): parsed
  // only when it changes.
  let publicUrl = '';
  let publicHost: string | null = null;
  const publicHostOf = (): string | null => {
    if (config.publicUrl !== publicUrl) {
      publicUrl = config.publicUrl;
      publicHost = URL.canParse(publicUrl) ? new URL(publicUrl).hostname : null;
    }
    return publicHost;
  };
  return (req, _res, next) => {
    // An absolute-form target names the host itself; the Host header is then to be ignored (RFC 9112 §3.2.2).
    const target = ABSOLUTE.exec(req.originalUrl)?.[1];
    const authority = target ?? req.headers.host;
    if (authority === undefined || (target === undefined && authority === '')) return next();
    const name = hostNameOf(authority);
    if (name !== null && (named.has(name) || name === localNameOf(req) || name === publicHostOf())) return next();
    next(new ApiError('host_not_allowed', refusal(authority, name)));
  };
}

function refusal(authority: string, name: string | null): string {
  const shown = JSON.stringify(authority.length > 100 ? `${authority.slice(0, 100)}…` : authority);
  if (name === null) return `The request's host ${shown} is not a host name with an optional port.`;
  return (
    `This emulator does not answer requests addressed to ${name} (a guard against DNS rebinding): it answers ` +
    `localhost, 127.0.0.1, [::1] and the address it listens on; start it with --allowed-hosts ${name} to answer that name too.`
  );
}
