import type { CheckResult, ClientRequest } from './types.ts';

/** A failure a client may retry: the service may do it next time, or the request never got an answer. */
export const retryable = (r: ClientRequest): boolean =>
  r.outcome === 'reset' || r.outcome === 'timeout' || r.outcome === 429 || (typeof r.outcome === 'number' && r.outcome >= 500);

/** A refusal that says the request itself is wrong: sent again unchanged, it is refused again. */
export const NOT_RETRYABLE = new Set([401, 402, 403, 404, 409, 422]);

const sameSent = (a: ClientRequest, b: ClientRequest): boolean => a.key === b.key && a.method === b.method && a.path === b.path && a.bodyDigest === b.bodyDigest;

/** Two requests a client sent as one: same key, method, path, body and steering (a retry never changes the steering). */
export const sameRequest = (a: ClientRequest, b: ClientRequest): boolean => sameSent(a, b) && a.steering === b.steering;

/** `b` is `a` steered otherwise and nothing else: the test sending the same call again for another scenario. */
export const reSteered = (a: ClientRequest, b: ClientRequest): boolean => sameSent(a, b) && a.steering !== b.steering;

export const isSubmit = (r: Pick<ClientRequest, 'method' | 'path'>): boolean => r.method === 'POST' && r.path === '/v1/tasks';

const TASK_READ = /^\/v1\/tasks\/([^/]+)$/;
/** The task a `GET /v1/tasks/{id}` reads. */
export const readTask = (r: ClientRequest): string | null => (r.method === 'GET' ? (TASK_READ.exec(r.path)?.[1] ?? null) : null);

export const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

/** Requests in the order they arrived (stable for equal times). */
export const inOrder = (requests: readonly ClientRequest[]): ClientRequest[] =>
  requests.map((r, i) => [r, i] as const).sort((a, b) => a[0].atMs - b[0].atMs || a[1] - b[1]).map(([r]) => r);

export function result(id: string, failures: { reason: string; evidence: string[] }[], exercised: boolean, missing: string): CheckResult {
  const [first] = failures;
  if (first) {
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more)` : '';
    return { id, status: 'fail', reason: first.reason + more, evidence: [...new Set(failures.flatMap((f) => f.evidence))] };
  }
  return exercised ? { id, status: 'pass', reason: null, evidence: [] } : { id, status: 'not_exercised', reason: missing, evidence: [] };
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
