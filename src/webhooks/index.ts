export { webhookAddressProblem, isInternalAddress } from './address-guard.ts';
