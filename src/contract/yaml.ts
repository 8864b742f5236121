import { createRequire } from 'node:module';
import type * as YamlModule from 'yaml';

type Yaml = typeof YamlModule;
let yaml: Yaml | undefined;

/**
 * YAML, loaded on first use: a start with the derived cache warm parses no YAML, and the parser's modules cost
 * a tenth of a start to load.
 */
export function parseYaml(text: string): unknown {
  yaml ??= createRequire(import.meta.url)('yaml') as Yaml;
  return yaml.parse(text);
}
