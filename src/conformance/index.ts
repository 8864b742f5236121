export { runConformance, matchesGlob, DEFAULT_BUDGET } from './suite.ts';
export type { SuiteOptions, SuiteReport } from './suite.ts';
export { ConformanceSetupError, FUNDED_POINTS } from './setup.ts';
export { junitXml, failureText, summaryLine } from './report.ts';
export { ALL_CHECKS } from './checks/index.ts';
export type { Check, CheckContext, CheckResult, Group } from './types.ts';
