import { move } from '../accounts/index.ts';
import { sub, tokenPoints, ZERO } from '../points/index.ts';
import type { LedgerRepo } from '../billing/index.ts';
import type { Points } from '../points/index.ts';
import type { Clock } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { admit, finished } from '../keys/index.ts';
import type { Admission, Concurrency } from '../keys/index.ts';
import type { TextModel } from '../models/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import { selectTextScenario, unmatchedMessage } from '../scenarios/index.ts';
import type { ScenarioRegistry, TextBehaviour, TextChoice } from '../scenarios/index.ts';
import type { AccountsRepo, KeysRepo, StoredAccount } from '../accounts/index.ts';
import type { Store } from '../store/index.ts';
import type { Generated, ParsedCall, TextCallView, TextFormat } from '../text-formats/index.ts';
import { textFingerprint } from '../text-formats/index.ts';
import { answerProblems } from './answer-checks.ts';
import { answersWithTool, cutAtMaximum, delivered, generate, inputTokensOf, streamUnits } from './generate.ts';
import type { GenerationOverrides } from './generate.ts';

export interface TextCallContext {
  /** The key's quota and the concurrency caps, checked after the points. */
  admission: Admission;
  concurrency: Concurrency;
  db: { store: Store; accounts: AccountsRepo; keys: KeysRepo; ledger: LedgerRepo };
  clock: Clock;
  random: Random;
  scenarios: ScenarioRegistry;
  textModels: TextModel[];
  requestId: string;
  /** Where a fixed answer that does not fit its call is told of (the emulator's log). */
  warn: (message: string) => void;
  /** Strict text answers: a call no scenario chooses, or whose fixed answer does not fit it, is refused. */
  strict: boolean;
  /**
   * Told how the call's answer was chosen once it is the call's answer: as an error answer or strict answers refuse
   * it (null: nothing chose one), or as it is admitted. A call refused for its points or limits is not told.
   */
  answered?: (choice: AnswerChoice | null) => void;
}

/** The scenario that answered a text call, which of its answers (from 0; null: it gives none), and how it was chosen. */
export type AnswerChoice = Pick<TextChoice, 'scenario' | 'step' | 'by'>;

/** A started text call: points frozen, output decided; the caller streams it and then settles. */
export interface TextCall {
  view: TextCallView;
  parsed: ParsedCall;
  behaviour: TextBehaviour;
  /** The scenario that answered, and how it was chosen. */
  choice: AnswerChoice;
  frozen: Points;
  /** The stream units of the whole answer: its events' `tokens`, summed. */
  readonly units: number;
  /** What `sent` stream units delivered: their output tokens and text. */
  delivered(sent: number): { outputTokens: number; output: string };
  /** Charges the input and the output tokens of `sent` stream units, refunds the rest of the freeze. */
  settle(sent: number): { frozen: Points; charged: Points; refunded: Points };
  /** A failure before output or a service fault: everything frozen comes back. */
  refundAll(): { frozen: Points; charged: Points; refunded: Points };
}

/**
 * The text model a request names, or 404 model_unavailable. Asked before the request is checked against the
 * document, whose `model` enum would otherwise make an unknown model a parameter error.
 * @see reference "Errors": model_unavailable
 */
export function textModelOf(models: TextModel[], id: string): TextModel {
  const model = models.find((m) => m.id === id);
  if (!model) throw new ApiError('model_unavailable', `Model '${id}' does not exist or is not a text model open to the API.`);
  return model;
}

const DEFAULT_BEHAVIOUR: TextBehaviour = {
  first_token_ms: 0,
  chunk_interval_ms: 0,
  reject: false,
  error_code: 'service_unavailable',
};

/** What a scenario's `text` block changes in the answer: a `json` answer is its JSON as the text. */
function overridesOf(behaviour: TextBehaviour): GenerationOverrides {
  const { output_tokens: outputTokens, input_tokens: inputTokens, chunks, finish, stop_sequence: stopSequence, tool_calls: toolCalls } = behaviour;
  const text = behaviour.json !== undefined ? JSON.stringify(behaviour.json) : behaviour.text;
  return {
    ...(text !== undefined ? { text } : {}),
    ...(toolCalls !== undefined ? { toolCalls } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(chunks !== undefined ? { chunks } : {}),
    ...(finish !== undefined ? { finish } : {}),
    ...(stopSequence !== undefined ? { stopSequence } : {}),
  };
}

/**
 * Starts a text call: the model (404 model_unavailable unless it is a text model), the maximum output (the
 * request's, already within the model limit, or the model default), the scenario (content review), the output, and
 * the freeze of input price × input tokens + output price × maximum output tokens (402 before anything starts).
 * Runs inside the caller's transaction; the settlement is a transaction of its own.
 * @see reference "Text endpoints" and "Text billing"
 */
export function startTextCall(ctx: TextCallContext, format: TextFormat, body: Record<string, unknown>, account: StoredAccount, scenarioHeader: string | undefined): TextCall {
  const parsed = format.parse(body);
  const model = textModelOf(ctx.textModels, parsed.request.model);
  // The document caps the requested maximum per model (the requests' allOf), so it is within the limit here.
  const maxTokens = parsed.requestedMax ?? model.default_max_tokens;
  // Hashed only when a rule asks (a recorded answer's `text_request`), once however many do.
  let fingerprint: string | null | undefined;
  const facts = { view: parsed.view, accountId: account.id, fingerprint: () => (fingerprint === undefined ? (fingerprint = textFingerprint(format, body)) : fingerprint) };
  const choice = selectTextScenario(ctx.scenarios, facts, scenarioHeader);
  const chosen: AnswerChoice = { scenario: choice.scenario, step: choice.step, by: choice.by };
  // Refused before anything is frozen: nothing charged.
  if (ctx.strict && choice.by === 'default') {
    ctx.answered?.(null);
    throw new ApiError('no_matching_answer', unmatchedMessage(ctx.scenarios, facts));
  }
  const behaviour: TextBehaviour = { ...DEFAULT_BEHAVIOUR, ...choice.behaviour };
  // An error answer is the call's whole answer: it counts as answered, though nothing is frozen.
  if (behaviour.reject) {
    choice.use();
    ctx.answered?.(chosen);
    throw new ApiError('content_rejected', 'The input failed content review; nothing was charged.');
  }
  if (behaviour.error) {
    choice.use();
    ctx.answered?.(chosen);
    throw errorAnswer(behaviour.error);
  }
  const problems = answerProblems(parsed.view, behaviour);
  if (ctx.strict && problems.length > 0) {
    ctx.answered?.(chosen);
    throw new ApiError('no_matching_answer', `The answer of ${answerName(choice)} does not fit this call (text answers are strict): ${problems.join('; ')}.`);
  }
  const stated = overridesOf(behaviour);
  const inputTokens = inputTokensOf(parsed.request, stated);
  const overrides: GenerationOverrides = { ...stated, inputTokens };
  let made: Generated | undefined;
  // Made when first read: a stream's first event goes out before it (a 500-token answer took a sixth of the time
  // to a stream's first byte), a settlement or a whole answer reads it.
  const generated = (): Generated => (made ??= generate({ ...parsed.request, maxTokens: Math.min(maxTokens, behaviour.max_output_tokens ?? maxTokens) }, overrides));
  const cut = cutAtMaximum(overrides);
  const nowMs = ctx.clock.now();
  // The freeze covers the maximum, or the answer if it holds more: a recorded answer is never cut, and a stated
  // `output_tokens` is charged as stated (a generated answer, tool calls included, always is cut). A charge is
  // then never beyond the freeze, nor a refund below zero.
  const frozen = tokenPoints(model, inputTokens, cut ? maxTokens : Math.max(maxTokens, generated().outputTokens));
  const callId = ctx.requestId;
  const admitted = admit(ctx.admission, frozen);
  move(ctx.db, account.id, { kind: 'freeze', points: frozen, callId, atMs: nowMs });
  admitted.started();
  ctx.answered?.(chosen);
  // Counted (and told of) once the freeze commits: a call refused after this point (its transaction rolled back) is not.
  ctx.db.store.afterCommit(() => {
    choice.use();
    for (const problem of problems) ctx.warn(`text call ${ctx.requestId}: ${answerName(choice)}: ${problem}`);
  });

  let settled: { frozen: Points; charged: Points; refunded: Points } | null = null;
  const startedOn = ctx.db.store.epoch;
  const finish = (charged: Points): { frozen: Points; charged: Points; refunded: Points } => {
    if (settled) return settled;
    // A reset while the call ran took its account and its freeze away: there is nothing left to settle, and the
    // fresh data (a new account under the same id, its own concurrency counts) must not be charged for it.
    if (ctx.db.store.epoch !== startedOn) {
      settled = { frozen, charged: ZERO, refunded: ZERO };
      return settled;
    }
    const refunded = sub(frozen, charged);
    const at = ctx.clock.now();
    settled = ctx.db.store.transaction(() => {
      if (charged !== ZERO) move(ctx.db, account.id, { kind: 'charge', points: charged, callId, atMs: at });
      if (refunded !== ZERO) move(ctx.db, account.id, { kind: 'refund', points: refunded, callId, atMs: at });
      // The key as stored now: its quota may have moved since the call started.
      const key = ctx.admission.key ? (ctx.db.keys.get(ctx.admission.key.key) ?? null) : null;
      finished(ctx.db, ctx.concurrency, key, account.id, { points: frozen, atMs: nowMs }, charged, at);
      return { frozen, charged, refunded };
    });
    return settled;
  };
  return {
    view: {
      id: ids.textCallId(ctx.random, format.idPrefix),
      model: model.snapshot,
      createdSeconds: Math.floor(nowMs / 1000),
      get generated() {
        return generated();
      },
      opening: { inputTokens, toolCalls: cut ? answersWithTool(parsed.request, overrides) : generated().toolCalls.length > 0 },
      includeUsage: parsed.includeUsage,
      echo: body,
      stopSequenceReason: behaviour.messages_stop_reason ?? 'end_turn',
    },
    parsed,
    behaviour,
    choice: chosen,
    frozen,
    get units() {
      return streamUnits(generated());
    },
    delivered: (sent) => delivered(generated(), sent),
    settle: (sent) => finish(tokenPoints(model, inputTokens, delivered(generated(), sent).outputTokens)),
    refundAll: () => finish(ZERO),
  };
}

/** Codes that carry Retry-After even when the answer sets none: the reference gives it to `rate_limited`. */
const RETRY_AFTER_DEFAULT: Partial<Record<string, number>> = { rate_limited: 1 };

/** A scenario's error answer as the error the call is refused with. */
function errorAnswer(error: NonNullable<TextBehaviour['error']>): ApiError {
  const retryAfter = error.retry_after ?? RETRY_AFTER_DEFAULT[error.code];
  return new ApiError(error.code, error.message, undefined, retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {});
}

/** The scenario and answer a log line names: `scenario 'x'`, `scenario 'x' answer 2` (from 1). */
const answerName = (choice: TextChoice): string => `scenario '${choice.scenario.name}'${choice.step !== null ? ` answer ${choice.step + 1}` : ''}`;
