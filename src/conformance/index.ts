export { runConformance, matchesGlob, DEFAULT_BUDGET } from './suite.ts';
export type { SuiteOptions, SuiteReport } from './suite.ts';
export { ConformanceSetupError, FUNDED_POINTS } from './setup.ts';
export { junitXml, failureText, summaryLine } from './report.ts';
export { ALL_CHECKS } from './checks/index.ts';
/** The rules of behaviour the suite judges over everything its account saw (src/observed), after its own checks. */
export { CHECKS as BEHAVIOUR_CHECKS } from '../observed/index.ts';
export type { Check, CheckContext, CheckResult, Group } from './types.ts';
