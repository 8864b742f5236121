import { errorOf, REQUEST_ID } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import { isPlainObject } from '../contract/index.ts';
import { diffJson } from './json-diff.ts';
import { maskOf } from './masks.ts';
import { compareStreams } from './stream.ts';
import type { CheckId, CheckOutcome, Finding } from './types.ts';

/** An answer as the comparison reads it (the conformance suite's exchange form). */
export type Answer = Pick<Exchange, 'status' | 'headers' | 'text' | 'json' | 'events'>;

export interface CompareOptions {
  /** The recording replaced content or secrets in this exchange. */
  redacted: boolean;
  /** False when the recording has no body for the answer (over the recorder's cap): the body is not compared. */
  recordedBody: boolean;
  /** A recorded string with the recorded ids replaced by the replay's. */
  rewrite: (recorded: string) => string;
}

type BodyKind = 'JSON' | 'event stream' | 'text' | 'empty';

const mediaType = (headers: Headers): string | null => headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? null;
const isStream = (answer: Answer): boolean => mediaType(answer.headers) === 'text/event-stream';
/** A comma-separated header value in a canonical order (`no-transform, no-cache` = `no-cache, no-transform`). */
const listValue = (value: string | null): string | null => value?.split(',').map((v) => v.trim().toLowerCase()).sort().join(', ') ?? null;
const requestIdForm = (value: string | null): string => (value === null ? 'missing' : REQUEST_ID.test(value) ? 'req_ + 24 lowercase letters or digits' : `another form (${value})`);

function bodyKind(answer: Answer): BodyKind {
  if (isStream(answer)) return 'event stream';
  if (answer.json !== undefined) return 'JSON';
  return answer.text === '' ? 'empty' : 'text';
}

function header(check: CheckId, name: string, recorded: string | null, replayed: string | null, what = (v: string | null): string | null => v): Finding[] {
  const [rec, rep] = [what(recorded), what(replayed)];
  if (rec === rep) return [];
  const show = (v: string | null): string => (v === null ? 'absent' : JSON.stringify(v));
  return [{ check, path: `headers.${name}`, recorded: rec, replayed: rep, message: `${name} is ${show(rec)} in the recording and ${show(rep)} in the replay` }];
}

/** The header checks: which apply to this pair of answers, and what they found. */
function headerChecks(rec: Answer, rep: Answer): CheckOutcome[] {
  const either = (name: string): boolean => rec.headers.has(name) || rep.headers.has(name);
  const outcomes: CheckOutcome[] = [
    { check: 'parity.headers.content-type', findings: header('parity.headers.content-type', 'content-type', mediaType(rec.headers), mediaType(rep.headers)) },
    {
      check: 'parity.headers.request-id',
      findings: ['x-request-id', ...(either('request-id') ? ['request-id'] : [])].flatMap((name) =>
        header('parity.headers.request-id', name, rec.headers.get(name), rep.headers.get(name), requestIdForm),
      ),
    },
  ];
  if (isStream(rec) || isStream(rep)) {
    const findings = ['cache-control', 'x-accel-buffering'].flatMap((name) => header('parity.headers.stream', name, listValue(rec.headers.get(name)), listValue(rep.headers.get(name))));
    outcomes.push({ check: 'parity.headers.stream', findings });
  }
  if (either('idempotent-replayed')) {
    const findings = header('parity.headers.idempotent-replayed', 'idempotent-replayed', rec.headers.get('idempotent-replayed'), rep.headers.get('idempotent-replayed'));
    outcomes.push({ check: 'parity.headers.idempotent-replayed', findings });
  }
  if (either('retry-after')) {
    const present = (v: string | null): string | null => (v === null ? null : 'present');
    outcomes.push({ check: 'parity.headers.retry-after', findings: header('parity.headers.retry-after', 'retry-after', rec.headers.get('retry-after'), rep.headers.get('retry-after'), present) });
  }
  return outcomes;
}

function bodyChecks(rec: Answer, rep: Answer, options: CompareOptions): CheckOutcome[] {
  const [recKind, repKind] = [bodyKind(rec), bodyKind(rep)];
  if (recKind !== repKind) {
    const finding: Finding = { check: 'parity.body.shape', path: '$', recorded: recKind, replayed: repKind, message: `the body is ${recKind} in the recording and ${repKind} in the replay` };
    return [{ check: 'parity.body.shape', findings: [finding] }];
  }
  if (recKind === 'event stream') return compareStreams(rec.events, rep.events, options);
  if (recKind === 'JSON') {
    const diff = diffJson(rec.json, rep.json, { ...options, root: '$', shapeCheck: 'parity.body.shape', valuesCheck: 'parity.body.values' });
    return [
      { check: 'parity.body.shape', findings: diff.shape },
      { check: 'parity.body.values', findings: diff.values },
    ];
  }
  const masked = maskOf({ path: [], key: '', parent: undefined, recorded: rec.text, replayed: rep.text, redacted: options.redacted }) !== null;
  const same = masked || options.rewrite(rec.text) === rep.text;
  const findings: Finding[] = same ? [] : [{ check: 'parity.body.values', path: '$', recorded: rec.text, replayed: rep.text, message: 'the body text differs' }];
  return [
    { check: 'parity.body.shape', findings: [] },
    { check: 'parity.body.values', findings },
  ];
}

/**
 * Every check that applies to a recorded answer and its replay, each with what it found: status, headers, and
 * the body (JSON, or an event stream's events) under the mask rules.
 */
export function compareAnswers(recorded: Answer, replayed: Answer, options: CompareOptions): CheckOutcome[] {
  const status: Finding[] =
    recorded.status === replayed.status
      ? []
      : [{ check: 'parity.status', path: 'status', recorded: recorded.status, replayed: replayed.status, message: `status ${recorded.status} in the recording and ${replayed.status} in the replay` }];
  const body = !options.recordedBody ? [] : refusedOnOneSide(recorded, replayed) ? [otherAnswer(recorded, replayed)] : bodyChecks(recorded, replayed, options);
  return [{ check: 'parity.status', findings: status }, ...headerChecks(recorded, replayed), ...body];
}

const refused = (answer: Answer): boolean => answer.status >= 400;
const refusedOnOneSide = (rec: Answer, rep: Answer): boolean => refused(rec) !== refused(rep);

/** An answer in a few words: an error's code and message, an object's keys, or its kind. */
function gist(answer: Answer): string {
  if (!isPlainObject(answer.json)) return bodyKind(answer);
  if (!refused(answer) || !isPlainObject(answer.json['error'])) return `{${Object.keys(answer.json).join(', ')}}`;
  const { code, message = '' } = errorOf(answer);
  return `error ${String(code)}: ${message}`;
}

/**
 * One side refused what the other answered: the bodies are different answers, not one answer with different
 * fields, so they make one difference that says what each side said (the refusal's own message tells why), rather
 * than one per field of the answer that is missing.
 */
function otherAnswer(rec: Answer, rep: Answer): CheckOutcome {
  const finding: Finding = { check: 'parity.body.shape', path: '$', recorded: gist(rec), replayed: gist(rep), message: `a different answer: ${gist(rec)} in the recording, ${gist(rep)} in the replay` };
  return { check: 'parity.body.shape', findings: [finding] };
}
