/**
 * The recording format: HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), which browser devtools and
 * other tools read, with the emulator's own facts in `_svcEmulator` fields (HAR allows custom fields whose names
 * start with an underscore). Each task is a page: its submission, polls and cancel carry the task id as
 * `pageref`, so a task's exchanges read as one group.
 */

export interface HarNameValue {
  name: string;
  value: string;
}

export interface HarRequest {
  method: string;
  /** The upstream's address of the request, query included. */
  url: string;
  httpVersion: string;
  cookies: [];
  headers: HarNameValue[];
  queryString: HarNameValue[];
  /** `comment` says why `text` is empty when the body was left out (over the cap, not UTF-8). */
  postData?: { mimeType: string; text: string; comment?: string };
  headersSize: -1;
  bodySize: number;
}

export interface HarResponse {
  status: number;
  statusText: string;
  httpVersion: string;
  cookies: [];
  headers: HarNameValue[];
  /** `text` is the body as the client's SDK reads it (content-encoding undone); a stream is its whole SSE text. */
  content: { size: number; mimeType: string; text?: string; comment?: string; encoding?: 'base64' };
  redirectURL: '';
  headersSize: -1;
  bodySize: number;
}

/** What the recorder knows about an exchange beyond HTTP. */
export interface HarEntryExtra {
  /** Which text format the request was (`chat`, `responses`, `messages`), for text calls. */
  textFormat?: 'chat' | 'responses' | 'messages';
  /**
   * `textFingerprint()` of the original request body, computed before redaction: a recorded text call can be
   * matched to a later request without the recording holding the prompt.
   */
  textFingerprint?: string;
  /** The task this exchange submitted, read, or canceled. */
  task?: string;
  /** What was replaced (`header:authorization`, `secret`, `content`), so a reader knows the text is not verbatim. */
  redacted?: string[];
  /** The body went over the recorder's cap and is left out. */
  truncated?: boolean;
  /**
   * The fault the proxy injected (`--faults`): the client saw this answer late, slowly or cut short, though the
   * service sent it whole. Errors and resets the proxy made up are not recorded: they are not the service's.
   */
  injectedFault?: { rule: string; kind: string };
}

export interface HarEntry {
  pageref?: string;
  /** ISO 8601 with the machine's real time of the request. */
  startedDateTime: string;
  /** Milliseconds from the request to the answer's last byte. */
  time: number;
  request: HarRequest;
  response: HarResponse;
  cache: Record<string, never>;
  /** `wait`: to the answer's first byte (a stream's first token); `receive`: from there to its last byte. */
  timings: { send: number; wait: number; receive: number };
  _svcEmulator?: HarEntryExtra;
}

export interface HarPage {
  startedDateTime: string;
  /** The task id. */
  id: string;
  title: string;
  pageTimings: Record<string, never>;
  _svcEmulator?: { model?: string };
}

export interface Har {
  log: {
    version: '1.2';
    creator: { name: string; version: string };
    pages: HarPage[];
    entries: HarEntry[];
    comment?: string;
    /** How the recording was made: the upstream it was recorded from, and whether prompts and outputs were kept. */
    _svcEmulator?: { upstream: string; keepContent: boolean };
  };
}

/** A header's value in a HAR list (case-insensitive), or undefined. */
export const harHeader = (headers: HarNameValue[], name: string): string | undefined =>
  headers.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value;
