export { createFaultRules, isCallbackRule } from './rule-set.ts';
export type { FaultRules } from './rule-set.ts';
export { pathMatches } from './match.ts';
export { CALLBACK_FAULTS, REQUEST_FAULTS } from './types.ts';
export type {
  CallbackFacts,
  CallbackFault,
  CallbackMatch,
  CallbackRule,
  FaultRule,
  RequestFacts,
  RequestFault,
  RequestMatch,
  RequestRule,
  RuleInput,
} from './types.ts';
export { answerInjectedError, FAULT_ERRORS, knownFaultCode } from './error-answer.ts';
export { shapeAnswer } from './shape-answer.ts';
export type { AnswerFault } from './shape-answer.ts';
export { checkRules } from './check.ts';
export { readFaultFile } from './file.ts';
export type { FaultFile } from './file.ts';
