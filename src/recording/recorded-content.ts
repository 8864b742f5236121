import type { HarEntry } from './har.ts';
import { parseJson as parseJsonText } from '../wire/index.ts';

/**
 * What the recorder and the importers read off an exchange's content: its JSON, and the marks the recorder's
 * redaction left.
 */

/** The recorder replaced the exchange's content (a recording made without --keep-content). */
export const redactedEntry = (entry: HarEntry): boolean => entry._svcEmulator?.redacted?.includes('content') === true;

/** Text the recorder replaced character by character (`xxx xx`). */
export const redactedText = (text: string): boolean => /^[x\s]*x[x\s]*$/.test(text);

/** A body or event as JSON; undefined when there is none or it is not JSON (JSON itself never parses to undefined). */
export const parseJson = (text: string | null | undefined): unknown => parseJsonText(text ?? '');
