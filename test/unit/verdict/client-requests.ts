import type { ClientRequest } from '../../../src/verdict/index.ts';

/** A request of the test client's key as the emulator logged it: a 200 submit unless `over` says otherwise. */
export function clientRequest(requestId: string, atMs: number, over: Partial<ClientRequest> = {}): ClientRequest {
  return {
    requestId,
    atMs,
    key: 'sk-a',
    account: 'acct_1',
    method: 'POST',
    path: '/v1/tasks',
    bodyDigest: 'd1',
    steering: null,
    idempotencyKey: null,
    outcome: 200,
    errorCode: null,
    retryAfter: null,
    taskId: null,
    taskStatus: null,
    ...over,
  };
}
