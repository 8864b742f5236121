/** RFC 9110 §7.6.1: headers that describe one connection, not the message; never forwarded or replayed. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authenticate', 'proxy-authorization']);
