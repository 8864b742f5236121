// The address policy lives in src/address-guard (the client side shares it); the server's folders take it from here.
export {
  webhookAddressProblem,
  webhookAddressProblemResolved,
  publicAddressProblem,
  publicAddressProblemResolved,
  publicAddressProblems,
  isInternalAddress,
  isIpLiteral,
  resolveWithDns,
} from '../address-guard/index.ts';
export type { AddressProblem, ResolveHost } from '../address-guard/index.ts';
export { createWebhooks } from './deliveries.ts';
export type { Webhooks, WebhookDeps } from './types.ts';
export { createSender } from './send.ts';
export type { Send, Outgoing, SendResult } from './send.ts';
export { signatureHeader } from './sign.ts';
export { attemptRequestHeaders } from './headers.ts';
export { RETRY_DELAYS_SECONDS, MAX_AUTOMATIC_ATTEMPTS, ROTATION_OVERLAP_MS } from './schedule.ts';
export { keepDeliveriesFor, DEFAULT_DELIVERY_RETENTION_MS } from './retention.ts';
export { deliveriesRepo, FAULT_ATTEMPTS } from './records.ts';
export type { StoredDelivery, DeliveryAttempt, DeliveryType, DeliveriesRepo, DeliveryFilter, DeliveryOrder, FaultAttempt } from './records.ts';
export { OUT_OF_ORDER_HOLD_MS } from './faults.ts';
export { DEFAULT_STALE_SECONDS } from './attempt.ts';
export { createSendPool, DEFAULT_SEND_CONCURRENCY } from './send-pool.ts';
export type { SendPool } from './send-pool.ts';
