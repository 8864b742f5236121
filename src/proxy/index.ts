export { createProxy } from './server.ts';
export type { Proxy, ProxyOptions } from './server.ts';
export type { Deviation } from './checks.ts';
export type { EndedExchange } from './exchange.ts';
