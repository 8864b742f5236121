import type { HarEntry } from './har.ts';

/** What both importers read off a recorded exchange's content: its JSON, and the marks the recorder's redaction left. */

/** The recorder replaced the exchange's content (a recording made without --keep-content). */
export const redactedEntry = (entry: HarEntry): boolean => entry._svcEmulator?.redacted?.includes('content') === true;

/** Text the recorder replaced character by character (`xxx xx`). */
export const redactedText = (text: string): boolean => /^[x\s]*x[x\s]*$/.test(text);

/** A recorded body or event as JSON; undefined when there is none or it is not JSON. */
export const parseJson = (text: string | undefined): unknown => {
  try {
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
};
