import { expect, it } from 'vitest';
import { chain, loaded } from '../support/import-graph.ts';

// A start with the derived-data cache warm validates nothing and reads no YAML, so it need not load Ajv or the YAML
// library: src/contract/ajv.ts and src/contract/yaml.ts load them on first use. A static import of either on the
// start's path (src/recording/scenario-file.ts had one, through the call records) puts their modules back into
// every start; in the package's bundle, their code into the chunks every start compiles.
const START = 'src/cli/start.ts';

it.each(['yaml', 'ajv', 'ajv-formats'])('%s is not among the modules a start imports statically', (pkg) => {
  const from = loaded(START, false);
  const reached = [...from.keys()].filter((module) => module.startsWith(`node_modules/${pkg}/`));
  expect(reached.slice(0, 1).map((module) => chain(from, module))).toEqual([]);
});

it('sees the packages a start does import', () => {
  const packages = [...loaded(START, false).keys()].filter((module) => module.startsWith('node_modules/'));
  expect(packages.some((module) => module.startsWith('node_modules/express/'))).toBe(true);
});
