import { CHECKS } from '../../observed/index.ts';
import { ALL_CHECKS } from '../checks/index.ts';
import type { CheckResult } from '../types.ts';
import { CHECK_META } from './checks.ts';
import type { Endpoint, RuleMeta } from './endpoints.ts';
import { RULE_META } from './rules.ts';

export type { Endpoint } from './endpoints.ts';

/**
 * One rule the suite or the checker holds, in the coverage table: a check (src/conformance/checks) or a rule of
 * behaviour (src/observed), what it holds in the project's words, and what it exercises.
 */
export interface CoverageRow {
  id: string;
  kind: 'check' | 'rule';
  /** What it holds: the check's title, the rule's `holds`. */
  rule: string;
  /** The operations it exercises as openapi/service.yaml names them, `callback <event>`, or `GET {file url}`. */
  endpoints: readonly Endpoint[];
  /** The behaviour it exercises there, in a few words. */
  behaviour: string;
  /** The suite exercises it only through the emulator's control API: not reachable through the public API. */
  control: boolean;
}

/** Rows without metadata in CHECK_META or RULE_META: the table test names them (it keeps the table whole). */
const UNDESCRIBED: RuleMeta = { endpoints: [], behaviour: '' };

/**
 * Every check and every rule, in the order they run and are reported: one table, from which the score of a run
 * and the docs' list of checks both come. A check's `control` is its own `needs`.
 */
export const COVERAGE: readonly CoverageRow[] = [
  ...ALL_CHECKS.map((check): CoverageRow => {
    const meta = CHECK_META[check.id] ?? UNDESCRIBED;
    return { id: check.id, kind: 'check', rule: check.title, endpoints: meta.endpoints, behaviour: meta.behaviour, control: (check.needs ?? []).includes('admin') };
  }),
  ...CHECKS.map((rule): CoverageRow => {
    const meta = RULE_META[rule.id] ?? UNDESCRIBED;
    return { id: rule.id, kind: 'rule', rule: rule.holds, endpoints: meta.endpoints, behaviour: meta.behaviour, control: meta.control === true };
  }),
];

/** Of a set of rules: how many there are, how many a run exercised (passed or failed, not skipped), how many passed. */
export interface CoverageCount {
  rules: number;
  exercised: number;
  passed: number;
}

/**
 * A run's score: of the rules reachable through the public API (those that do not need the control API), and of
 * all of them. What a CI job keeps and compares from run to run.
 */
export interface Coverage {
  public: CoverageCount;
  all: CoverageCount;
}

/** The score of a run's results against the whole table: a rule not selected, or skipped, was not exercised. */
export function coverageOf(results: readonly Pick<CheckResult, 'id' | 'status'>[], table: readonly CoverageRow[] = COVERAGE): Coverage {
  const status = new Map(results.map((r) => [r.id, r.status]));
  const count = (rows: readonly CoverageRow[]): CoverageCount => ({
    rules: rows.length,
    exercised: rows.filter((row) => status.get(row.id) === 'passed' || status.get(row.id) === 'failed').length,
    passed: rows.filter((row) => status.get(row.id) === 'passed').length,
  });
  return { public: count(table.filter((row) => !row.control)), all: count(table) };
}

/** The line the command prints before its summary. */
export function coverageLine({ public: open, all }: Coverage): string {
  return `coverage: ${open.exercised} of ${open.rules} rules reachable through the public API exercised (${open.passed} passed); ${all.exercised} of ${all.rules} with the control API (${all.passed} passed)`;
}
