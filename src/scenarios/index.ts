export { loadScenarioLibrary, checkScenarios, ScenarioFileError, SCENARIOS_DIR } from './load.ts';
export type { ScenarioLibrary } from './load.ts';
export { createScenarioRegistry } from './registry.ts';
export type { ScenarioRegistry } from './registry.ts';
export { selectScenario, planFor, SCENARIO_HEADER, SCENARIO_METADATA_KEY } from './select.ts';
export type { Submitted } from './select.ts';
export type { Scenario, ScenarioMatch, TaskPlan, TextBehaviour } from './types.ts';
export { scenariosRepo } from './records.ts';
export type { ScenariosRepo } from './records.ts';
