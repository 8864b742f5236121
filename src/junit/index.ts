/**
 * JUnit XML, as CI systems read it, for every report the tool writes (conformance, proxy, parity, verdict): one
 * escaping rule and one document shape, so a report that parses in one parses in all.
 */

/**
 * Text made safe for an XML attribute or element. What XML 1.0 cannot hold at all (most control characters, lone
 * surrogates), which an answer's body may carry into a message, becomes U+FFFD, so the report still parses.
 */
export const escapeXml = (text: string): string =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c);
