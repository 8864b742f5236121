export { createProxy } from './server.ts';
export type { Proxy, ProxyOptions } from './server.ts';
export { PROXY_CHECKS } from './checks.ts';
export type { Deviation } from './checks.ts';
export { proxyJunitXml } from './report.ts';
export type { ProxyResults } from './report.ts';
// What `onExchange` is given (defined in src/wire, which the recording shares).
export type { EndedExchange } from '../wire/index.ts';
export type { RelayOptions } from './relay.ts';
export type { HistoryMemory } from './histories.ts';
