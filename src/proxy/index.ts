export { createProxy } from './server.ts';
export type { Proxy, ProxyOptions } from './server.ts';
export { PROXY_CHECKS } from './checks.ts';
export type { Deviation } from './checks.ts';
export { proxyJunitXml } from './report.ts';
export type { ProxyResults } from './report.ts';
export type { EndedExchange } from './exchange.ts';
export type { RelayOptions } from './relay.ts';
export type { HistoryMemory } from './histories.ts';
