import type { CallDetails } from '../../calls/index.ts';
import { errorBody, generationFault } from '../../errors/index.ts';
import type { ApiError } from '../../errors/index.ts';
import { encodeEvent, startTextCall } from '../../text/index.ts';
import type { AnswerChoice, TextCall, TextFormat } from '../../text/index.ts';
import { admissionOf } from './admission.ts';
import type { ApiDeps, Caller } from './deps.ts';

export interface TextRequest {
  /** The body, checked by the contract against the format's request schema. */
  body: Record<string, unknown>;
  scenarioHeader?: string | undefined;
  requestId: string;
  /**
   * Runs inside the transaction that freezes the call's points: the call's record goes with the freeze (a call
   * whose points moved is never without one).
   */
  started?: (call: TextCall) => void;
  /** How the call's answer was chosen, once it is the answer: an error answer's and a strict refusal's too (null: none chosen). */
  answered?: (choice: AnswerChoice | null) => void;
  /** Runs inside each settlement's transaction, with what the call's record says of it. */
  settled: (details: Required<Pick<CallDetails, 'text'>>) => void;
}

/** One step of a streamed answer, in order. */
export type StreamStep =
  /** Events to write; `tokens` stream units of output go with them. */
  | { type: 'event'; text: string; tokens: number }
  /** A yield point: write what is pending, stop if the client went, then wait `ms` (0: let other streams run). */
  | { type: 'pause'; ms: number }
  /** The scenario's fault: its error events are the last thing written; settle with `fault(sent)`. */
  | { type: 'fault'; error: ApiError; text: string };

/**
 * A started text call: what it answers, when, its fault, and what is charged for it. The caller writes the
 * answer (one body, or a stream's steps) and reports how it ended; the settlement follows from that.
 * @see reference "Text endpoints (synchronous)", "Streaming" and "Text billing"
 */
export interface TextRun {
  call: TextCall;
  stream: boolean;
  /** The whole answer's body, after the first-token wait; or the fault (the points refunded), thrown. */
  answer(): Promise<unknown>;
  /** The stream's steps; the caller counts the output units it actually wrote. */
  steps(): Generator<StreamStep>;
  /** Every event written: charged on the whole output. */
  finish(): void;
  /** The client went away after `sent` units: charged on them. */
  disconnect(sent: number): void;
  /** The fault ended it after `sent` units: nothing is charged. */
  fault(sent: number): void;
}

/** The three text endpoints of /v1. */
export function textApi(deps: ApiDeps) {
  const { db, clock } = deps;
  return {
    /** Admits the call (points frozen, output decided by the model and the scenario). */
    startText(caller: Caller, format: TextFormat, request: TextRequest): TextRun {
      const call = db.store.transaction(() => {
        const started = startTextCall(
          {
            admission: admissionOf(deps, caller),
            concurrency: deps.concurrency,
            db,
            clock,
            random: deps.random,
            scenarios: deps.scenarios,
            textModels: deps.textModels,
            requestId: request.requestId,
            warn: deps.warn,
            strict: deps.textAnswers === 'strict',
            ...(request.answered ? { answered: request.answered } : {}),
          },
          format,
          request.body,
          caller.account,
          request.scenarioHeader,
        );
        request.started?.(started);
        return started;
      });
      const { behaviour } = call;

      /** Settles on the output of `sent` stream units (or refunds it all) and records it, in one transaction. */
      const settle = (sent: number, charge: 'sent' | 'refund', clientClosed: boolean): void => {
        if (db.store.closed) return;
        db.store.transaction(() => {
          const points = charge === 'refund' ? call.refundAll() : call.settle(sent);
          const { outputTokens, output } = call.delivered(sent);
          request.settled({
            text: {
              stream: call.parsed.stream,
              input_tokens: call.view.generated.inputTokens,
              output_tokens: outputTokens,
              points,
              client_closed: clientClosed,
              ...(deps.config.recordContent ? { content: { prompt: call.parsed.request.prompt, output } } : {}),
            },
          });
        });
      };

      return {
        call,
        stream: call.parsed.stream,
        async answer() {
          await clock.wait(behaviour.first_token_ms);
          // A fault part-way through generation (an answer shorter than the fault point finishes, as a stream would).
          if (behaviour.error_after_chunks !== undefined && call.view.generated.pieces.length > behaviour.error_after_chunks) {
            settle(0, 'refund', false);
            throw generationFault(behaviour.error_code);
          }
          settle(call.units, 'sent', false);
          return format.body(call.view);
        },
        *steps() {
          let chunks = 0;
          let sequence = 0;
          for (const event of format.events(call.view)) {
            if (event.tokens > 0) {
              if (behaviour.error_after_chunks !== undefined && chunks >= behaviour.error_after_chunks) {
                const error = generationFault(behaviour.error_code);
                const body = errorBody(format.name === 'messages' ? 'messages' : 'openai', error, request.requestId);
                let text = '';
                for (const e of format.errorEvents(body, sequence)) text += encodeEvent(e);
                yield { type: 'fault', error, text };
                return;
              }
              const delay = chunks === 0 ? behaviour.first_token_ms : behaviour.chunk_interval_ms;
              // Without latency, a yield now and then so concurrent streams interleave, without a write per turn.
              if (delay > 0 || chunks % 32 === 0) yield { type: 'pause', ms: delay };
              chunks += 1;
            }
            yield { type: 'event', text: event.text, tokens: event.tokens };
            sequence += 1;
          }
        },
        finish: () => settle(call.units, 'sent', false),
        disconnect: (sent) => settle(sent, 'sent', true),
        fault: (sent) => settle(sent, 'refund', false),
      };
    },
  };
}
