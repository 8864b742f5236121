import type { TaskObservation } from './history.ts';

export type Status = 'queued' | 'processing' | 'succeeded' | 'failed' | 'canceled';
export interface TaskPoints {
  frozen: string;
  charged: string;
  refunded: string;
}

/** A task as one answer showed it, read defensively: what is not of the documented shape is left unknown. */
export interface TaskView {
  id: string;
  status: Status;
  model: unknown;
  createdAt: unknown;
  startedAt: unknown;
  finishedAt: unknown;
  input: unknown;
  /** Null unless all three are three-decimal strings (the wire checks say when they are not). */
  points: TaskPoints | null;
  output: unknown;
  error: unknown;
  raw: Readonly<Record<string, unknown>>;
}

/** A task read: the view and the observation (or list page) it came from. */
export interface TaskRead {
  view: TaskView;
  obs: TaskObservation;
}

/** @see reference "States and transitions" */
export const RANK: Readonly<Record<Status, number>> = { queued: 0, processing: 1, succeeded: 2, failed: 2, canceled: 2 };
export const isTerminal = (status: Status): boolean => RANK[status] === 2;
const POINTS = /^-?\d+\.\d{3}$/;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function viewTask(json: unknown): TaskView | null {
  if (!isRecord(json) || typeof json.id !== 'string' || typeof json.status !== 'string' || !(json.status in RANK)) return null;
  const p = isRecord(json.points) ? json.points : {};
  const points = [p.frozen, p.charged, p.refunded].every((v) => typeof v === 'string' && POINTS.test(v))
    ? { frozen: p.frozen as string, charged: p.charged as string, refunded: p.refunded as string }
    : null;
  return {
    id: json.id,
    status: json.status as Status,
    model: json.model,
    createdAt: json.created_at,
    startedAt: json.started_at,
    finishedAt: json.finished_at,
    input: json.input,
    points,
    output: json.output,
    error: json.error,
    raw: json,
  };
}

/** Epoch ms of an ISO 8601 time, or null when it is not one. */
export function timeMs(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** `b` began after `a`'s answer came, so the server read the task for `b` after it did for `a`. */
export const readAfter = (b: { sentMs: number }, a: { receivedMs: number }): boolean => b.sentMs >= a.receivedMs;

/** Equal as JSON values, whatever the key order. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

export const idsOf = (...observations: { requestId: string | null }[]): string[] => [
  ...new Set(observations.map((o) => o.requestId).filter((id): id is string => id !== null)),
];

export const named = (o: { requestId: string | null }): string => o.requestId ?? '(no request id)';
