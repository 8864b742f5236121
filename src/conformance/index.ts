export { runConformance, matchesGlob, DEFAULT_BUDGET } from './suite.ts';
export type { SuiteOptions, SuiteReport } from './suite.ts';
export { ConformanceSetupError, FUNDED_POINTS } from './setup.ts';
export { junitXml, failureText, summaryLine, coverageLine } from './report.ts';
/** The one table of every check and rule (what each exercises, whether it needs the control API), and a run's score. */
export { COVERAGE, coverageOf } from './coverage-table/index.ts';
export type { Coverage, CoverageCount, CoverageRow, Endpoint } from './coverage-table/index.ts';
export { ALL_CHECKS } from './checks/index.ts';
/** The rules of behaviour the suite judges over everything its account saw (src/observed), after its own checks. */
export { CHECKS as BEHAVIOUR_CHECKS } from '../observed/index.ts';
export type { Check, CheckContext, CheckResult, Group } from './types.ts';
/**
 * What the checking proxy (src/proxy) judges with, as the suite does: the checks every answer and every stream gets,
 * the response contract they read, and the emulator's control API and clock when it is the upstream.
 */
export { ANSWER_CHECKS, formatDeviations, genericDeviations } from './answers.ts';
export type { AnswerDeviation } from './answers.ts';
export { loadResponseContract } from './spec.ts';
export type { ResponseContract } from './spec.ts';
export { STREAM_ORDER_CHECKS, streamFormatOf, streamOrderProblems, streamRequestOf } from './stream-order.ts';
export { controlRequest } from './setup.ts';
export type { Admin } from './setup.ts';
export { emulatorClock } from './deployment-clock.ts';
export type { DeploymentClock } from './deployment-clock.ts';
