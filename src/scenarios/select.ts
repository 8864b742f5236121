import { ApiError } from '../errors/index.ts';
import type { ScenarioRegistry } from './registry.ts';
import { hasTextKey } from './text-match.ts';
import type { Scenario, ScenarioMatch, TaskPlan } from './types.ts';

export const SCENARIO_HEADER = 'X-Emulator-Scenario';
export const SCENARIO_METADATA_KEY = 'emulator_scenario';

export interface Submitted {
  model: string;
  accountId: string;
  input: Record<string, unknown>;
  metadata: Record<string, string>;
  /** The X-Emulator-Scenario header, if sent. */
  header: string | undefined;
}

/**
 * The scenario of a task submission (a text call's is `selectTextScenario`'s): the header, else the metadata key, else the first scenario whose match rules
 * fit, else `default`. A named scenario that does not exist is a 422 naming where it came from, never a
 * silent fallback.
 */
export function selectScenario(registry: ScenarioRegistry, submitted: Submitted): Scenario {
  const named: [string, string | undefined][] = [
    [SCENARIO_HEADER, submitted.header],
    [`metadata.${SCENARIO_METADATA_KEY}`, submitted.metadata[SCENARIO_METADATA_KEY]],
  ];
  for (const [field, name] of named) {
    if (name === undefined) continue;
    const scenario = registry.get(name);
    if (!scenario) {
      throw new ApiError('invalid_params', `${field}: no scenario named '${name}'`, [
        { field, message: `no scenario named '${name}' (GET /_emulator/scenarios lists them)` },
      ]);
    }
    return scenario;
  }
  const all = registry.list();
  const matched = all.find((s) => s.match !== undefined && matches(s.match, submitted));
  const fallback = matched ?? all.find((s) => s.name === 'default');
  if (!fallback) throw new Error('no default scenario');
  return fallback;
}

function matches(match: ScenarioMatch, submitted: Submitted): boolean {
  // A rule of text calls (`text_request`, `last_user`, …): no task fits it.
  if (hasTextKey(match)) return false;
  if (match.models && !match.models.includes(submitted.model)) return false;
  if (match.accounts && !match.accounts.includes(submitted.accountId)) return false;
  for (const [field, expected] of Object.entries(match.input ?? {})) {
    const value = submitted.input[field];
    if (typeof expected === 'object') {
      if (typeof value !== 'string' || !value.includes(expected.contains)) return false;
    } else if (value !== expected) return false;
  }
  for (const [key, expected] of Object.entries(match.metadata ?? {})) {
    if (submitted.metadata[key] !== expected) return false;
  }
  return true;
}

/** Fixes a scenario into the plan stored with a task. */
export function planFor(scenario: Scenario, model: string): TaskPlan {
  const times = scenario.per_model?.[model] ?? {};
  const processing = times.processing_seconds ?? scenario.processing_seconds;
  return {
    scenario: scenario.name,
    queue_ms: Math.round((times.queue_seconds ?? scenario.queue_seconds) * 1000),
    processing_ms: scenario.outcome === 'timeout' ? null : Math.round(processing * 1000),
    outcome: scenario.outcome === 'succeeded' ? 'succeeded' : 'failed',
    // A failure only means something for the `failed` outcome.
    failure: scenario.failure && scenario.outcome === 'failed'
      ? { code: scenario.failure.code, during: scenario.failure.during, message: scenario.failure.message ?? null }
      : null,
    cancelable_while_processing: scenario.cancelable_while_processing,
    output: scenario.output ?? null,
    settle: scenario.settle ?? null,
  };
}
