import type { Exchange } from './exchange.ts';
import { isSecretHeader, redactSecrets } from './secrets.ts';

/**
 * A curl line that reproduces an exchange, with no credential in it: the key shown as `sk-REDACTED` (put yours in
 * its place), other credential headers (signatures, nonces, cookies, tokens) as `[redacted]`, and secret-looking
 * strings in the address, the other headers and the body hidden as a recording hides them.
 */
export function curlOf(baseUrl: string, exchange: Exchange): string {
  const hide = (text: string): string => redactSecrets(text).text;
  const parts = [`curl -sS -X ${exchange.method} '${hide(`${baseUrl}${exchange.path}`)}'`];
  for (const [name, value] of Object.entries(exchange.requestHeaders)) {
    // Whatever form a key has, none of it is printed.
    const shown = /^authorization$/i.test(name)
      ? value.replace(/^(\S+\s+).*$/, '$1sk-REDACTED')
      : /^x-api-key$/i.test(name)
        ? 'sk-REDACTED'
        : isSecretHeader(name)
          ? '[redacted]'
          : hide(value);
    parts.push(`-H '${name}: ${shown}'`);
  }
  if (exchange.requestBody !== undefined) parts.push(`--data-raw '${hide(exchange.requestBody).replaceAll("'", "'\\''")}'`);
  return parts.join(' ');
}
