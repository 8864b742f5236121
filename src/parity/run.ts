import { curlOf } from '../wire/index.ts';
import { machineNow } from '../clock/index.ts';
import { recordedTaskScenario, recordedTextScenario, redactedEntry } from '../recording/index.ts';
import type { HarEntry, Recording } from '../recording/index.ts';
import { compareAnswers } from './compare.ts';
import { openControl, ParitySetupError } from './control.ts';
import type { Control } from './control.ts';
import { endpointOf, IdMap } from './ids.ts';
import { recordedExchange, REFUSED_KEY, replayRequest, send } from './replay.ts';
import type { ReplayRequest, Target } from './replay.ts';
import { buildReport } from './report.ts';
import type { ExchangeResult } from './report.ts';
import { serviceTimes } from './timing.ts';
import type { ParityReport } from './types.ts';

export interface ParityOptions {
  recording: Recording;
  /** The deployment to replay against: scheme and host. */
  baseUrl: string;
  apiKey: string;
  /**
   * The emulator's control API token. With it the emulator's clock is moved by the recorded time between
   * exchanges, so each task is polled at the age it had when recorded.
   */
  adminToken?: string;
  /** `recorded`: name the scenario import-recording made of each task (`recorded-<task id>`) and text call (`recorded-text-<fingerprint>`) where the deployment has it. */
  scenarios?: 'recorded' | 'none';
  /** Per request, to the answer's last byte (default 60 s). */
  requestTimeoutMs?: number;
  /** Called after each exchange is replayed and compared (progress). */
  onExchange?: (result: ExchangeResult) => void;
}

const isSubmission = (method: string, path: string): boolean => method === 'POST' && path.split('?')[0] === '/v1/tasks';
const redactedContent = (entry: HarEntry): boolean => (entry._svcEmulator?.redacted ?? []).some((what) => !what.startsWith('header:'));
const list = (entries: number[]): string => `entr${entries.length === 1 ? 'y' : 'ies'} ${entries.join(', ')}`;

/** The recorded task a submission made: as the recorder tagged it, else the recorded answer's id. */
function recordedTask(entry: HarEntry, answer: unknown): string | null {
  const id = entry._svcEmulator?.task ?? entry.pageref ?? (answer as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : null;
}

/** Names the scenario in X-Emulator-Scenario, in place of any the recorded request named. */
function nameScenario(request: ReplayRequest, scenario: string): void {
  for (const header of Object.keys(request.headers)) if (header.toLowerCase() === 'x-emulator-scenario') delete request.headers[header];
  request.headers['X-Emulator-Scenario'] = scenario;
}

/** The recorder left the request's body out (over its cap, or not UTF-8): it cannot be sent again. */
const requestBodyLeftOut = (entry: HarEntry): boolean =>
  entry.request.postData === undefined ? entry.request.bodySize > 0 : entry.request.postData.text === '' && entry.request.postData.comment !== undefined;

/** The recording holds the answer's body as text (an empty body included): it can be compared. */
const answerBodyKept = (entry: HarEntry): boolean => {
  const { content } = entry.response;
  return content.encoding !== 'base64' && (content.text !== undefined || (content.comment === undefined && entry._svcEmulator?.truncated !== true));
};

/** What the replay could not do as recorded: entry indexes, or task ids for the scenarios. */
interface Seen {
  signed: number[];
  refused: number[];
  unsent: number[];
  xedUploads: number[];
  noBody: number[];
  cutOff: string[];
  withScenario: string[];
  withoutScenario: string[];
  textWithScenario: number;
}

function notesOf(seen: Seen, clock: { clockMoved: boolean; spanMs: number }): string[] {
  const notes: string[] = [];
  if (seen.signed.length > 0) notes.push(`${list(seen.signed)} carried signing headers (X-Svc-Signature): a signature cannot be made again, so they went unsigned with the given key`);
  if (seen.refused.length > 0) notes.push(`${list(seen.refused)} had a key the service refused (401): replayed with a key no deployment knows (${REFUSED_KEY})`);
  if (seen.unsent.length > 0) notes.push(`${list(seen.unsent)} not replayed: the request body is not in the recording (over the recorder's cap, or not UTF-8)`);
  if (seen.xedUploads.length > 0) notes.push(`${list(seen.xedUploads)} uploaded a file the recording x-ed out (recorded without --keep-content): the deployment got the x's`);
  if (seen.noBody.length > 0) notes.push(`${list(seen.noBody)}: the recorded answer's body is not in the recording, so only status and headers were compared`);
  if (!clock.clockMoved && clock.spanMs >= 1000) {
    notes.push('without --admin-token the deployment’s clock was not moved: tasks were polled at whatever age they had, not at their recorded age');
  }
  const n = seen.withScenario.length;
  if (n > 0) notes.push(`${n} task${n === 1 ? ' was' : 's were'} submitted with X-Emulator-Scenario: recorded-<task id>`);
  if (seen.textWithScenario > 0) notes.push(`${seen.textWithScenario} text call${seen.textWithScenario === 1 ? ' was' : 's were'} sent with X-Emulator-Scenario: recorded-text-<fingerprint>`);
  if (seen.withoutScenario.length > 0) notes.push(`no recorded-<task id> scenario on the deployment for ${seen.withoutScenario.join(', ')}: submitted as recorded`);
  return [...notes, ...seen.cutOff];
}

/**
 * Replays a recording against a deployment in recorded order and compares each answer with the recorded one.
 * Throws ParityUnreachable when the deployment answers nothing, ParitySetupError when the control API refuses.
 * @see README.md "Proxy" (recording, parity)
 */
export async function runParity(options: ParityOptions): Promise<ParityReport> {
  const started = machineNow();
  const target: Target = { baseUrl: options.baseUrl.replace(/\/+$/, ''), apiKey: options.apiKey, timeoutMs: options.requestTimeoutMs ?? 60_000 };
  const control: Control | null = options.adminToken === undefined ? null : await openControl(target, options.adminToken);
  if (options.scenarios === 'recorded' && control === null) throw new ParitySetupError('--scenarios recorded needs --admin-token: the scenarios are listed by the control API');
  const scenarios = options.scenarios === 'recorded' && control !== null ? await control.scenarioNames() : null;
  const { entries } = options.recording;
  const times = serviceTimes(entries);
  const ids = new IdMap();
  const rewrite = (text: string): string => ids.rewrite(text);
  const results: ExchangeResult[] = [];
  const seen: Seen = { signed: [], refused: [], unsent: [], xedUploads: [], noBody: [], cutOff: [], withScenario: [], withoutScenario: [], textWithScenario: 0 };

  // How far the deployment's clock has been moved: a step under a millisecond waits for the next, never dropped.
  let moved = 0;
  for (const [index, entry] of entries.entries()) {
    const step = Math.floor((times[index] ?? 0) - (times[0] ?? 0) - moved);
    if (control !== null && step >= 1) {
      await control.advance(step);
      moved += step;
    }
    const request = replayRequest(entry, ids, target.apiKey);
    if (requestBodyLeftOut(entry)) {
      seen.unsent.push(index);
      continue;
    }
    if (request.wasSigned) seen.signed.push(index);
    if (request.method === 'POST' && request.path.split('?')[0] === '/v1/files' && redactedEntry(entry)) seen.xedUploads.push(index);
    if (request.keyRefused) seen.refused.push(index);
    const recorded = recordedExchange(entry, request);
    const task = isSubmission(request.method, request.path) ? recordedTask(entry, recorded.json) : null;
    if (scenarios !== null && task !== null) {
      const scenario = recordedTaskScenario(task);
      if (!scenarios.has(scenario)) seen.withoutScenario.push(task);
      else {
        seen.withScenario.push(task);
        nameScenario(request, scenario);
      }
    }
    // A text call's recorded answer: the fingerprint is of the recorded prompt, which a redacted recording no
    // longer holds, so the replay names the scenario instead of leaving it to the match rule.
    const fingerprint = entry._svcEmulator?.textFingerprint;
    const textScenario = fingerprint === undefined ? null : recordedTextScenario(fingerprint);
    if (scenarios !== null && textScenario !== null && scenarios.has(textScenario)) {
      seen.textWithScenario += 1;
      nameScenario(request, textScenario);
    }
    const replayed = await send(target, request);
    if (replayed.cutOff !== null) seen.cutOff.push(`entry ${index}: ${replayed.cutOff}`);
    ids.learn(recorded.json, replayed.exchange.json);
    const recordedBody = answerBodyKept(entry);
    if (!recordedBody) seen.noBody.push(index);
    const outcomes = compareAnswers(recorded, replayed.exchange, { redacted: redactedContent(entry), recordedBody, rewrite });
    const result: ExchangeResult = { entry: index, endpoint: endpointOf(request.method, request.path), outcomes, curl: curlOf(target.baseUrl, replayed.exchange) };
    results.push(result);
    options.onExchange?.(result);
  }

  const notes = notesOf(seen, { clockMoved: control !== null, spanMs: (times.at(-1) ?? 0) - (times[0] ?? 0) });
  return buildReport({ baseUrl: target.baseUrl, files: options.recording.files, results, notes, durationMs: machineNow() - started });
}
