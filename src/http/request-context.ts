import type { Response } from 'express';
import type { StoredAccount, StoredKey } from '../accounts/index.ts';
import type { CallDetails, CallRecord, RecordedBody } from '../calls/index.ts';

/** When a /v1 request began, on the virtual clock, and on which store (a reset starts a new one). */
export interface CallStart {
  atMs: number;
  epoch: number;
  /** The answer is over: its final record is written or on its way (`endCall`). */
  ended: boolean;
  /** What an error answer's body said (`jsonNotingErrors`). */
  error?: Pick<CallRecord, 'error_message' | 'error_details'>;
  /** The request's headers as recorded, made once: a record may be written twice (`recordCall`, `endCall`). */
  headers?: Record<string, string>;
  /** With `--record-content` only: the bodies noted for the record (call-bodies.ts). */
  bodies?: BodyNotes;
  /** The record as `recordCall` last wrote it, but its latency: the end writes it again only if more changed. */
  written?: string | undefined;
}

/** What is noted of one call's bodies while it goes on, with `--record-content` (call-bodies.ts). */
export interface BodyNotes {
  /** The answer's first bytes as written, and how many of them are kept. */
  sent: Buffer[];
  keptBytes: number;
  /** Bytes of every write of the answer. */
  sentBytes: number;
  /** Bytes of a body read only for the record (the request was refused before its body was read). */
  unread?: { head: Buffer; size: number | null; partial: boolean };
  /** The request's body as recorded, made once: a record may be written twice. */
  request?: RecordedBody | null;
}

/**
 * What the steps of one request learn about it and hand to the later ones: one typed object per request, set up
 * by the first step (request-id.ts) and read through `contextOf`, instead of loose keys of `res.locals`.
 */
export interface RequestContext {
  readonly requestId: string;
  /** When it arrived, on the wall clock (latencies are real time). */
  readonly startedWall: number;
  /** The key and account a /v1 request authenticated with (api-key.ts). */
  key?: StoredKey;
  account?: StoredAccount;
  /** The code of the error it was answered with, whoever answered (error-handler.ts, refusals.ts). */
  errorCode?: string;
  /** A /v1 request's call record in the making (call-records.ts). */
  callStart?: CallStart;
  /** What its route adds to its call's record. */
  call?: CallDetails;
  /** The task a tasks route answered with (a submit's, a read's, a cancel's), for the client log's verdict. */
  task?: { readonly id: string; readonly status: string };
}

const KEY = 'context';

/** The first step of a request: its context, with its id and arrival time. */
export function beginContext(res: Response, requestId: string, startedWall: number): RequestContext {
  const context: RequestContext = { requestId, startedWall };
  res.locals[KEY] = context;
  return context;
}

export const contextOf = (res: Response): RequestContext => res.locals[KEY] as RequestContext;

/** Notes the task a route answers with, as it was answered (the object itself may change once it is sent). */
export function noteTask(res: Response, task: { readonly id: string; readonly status: string }): void {
  contextOf(res).task = { id: task.id, status: task.status };
}
