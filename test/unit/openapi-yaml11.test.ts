import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

/**
 * The documents load with a YAML 1.1 parser too: tools written in Python read them with PyYAML's `safe_load`,
 * which refuses things YAML 1.2 parsers accept (an unquoted `usage?` in a flow sequence, say). Run with the
 * machine's python3 and PyYAML; without them the test says so and is skipped.
 */
const LOAD = 'import sys, yaml\nfor path in sys.argv[1:]:\n    yaml.safe_load(open(path, encoding="utf-8"))\nprint("ok")';
const documents = ['service.yaml', 'admin.yaml'].map((name) => fileURLToPath(new URL(`../../openapi/${name}`, import.meta.url)));
const probe = spawnSync('python3', ['-c', 'import yaml'], { encoding: 'utf8' });
const available = probe.status === 0;
if (!available) console.warn('test/unit/openapi-yaml11.test.ts: skipped: python3 with PyYAML is not on this machine');

it.skipIf(!available)('loads both OpenAPI documents with PyYAML (YAML 1.1) safe_load', () => {
  const run = spawnSync('python3', ['-c', LOAD, ...documents], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.stdout.trim()).toBe('ok');
});
