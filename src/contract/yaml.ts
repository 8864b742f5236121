import { createRequire } from 'node:module';
import type * as YamlModule from 'yaml';

type Yaml = typeof YamlModule;
let yaml: Yaml | undefined;

/**
 * The YAML library, loaded on first use: a start with the derived cache warm reads no YAML and writes none, and
 * the parser's seventy-odd modules cost a tenth of a start to load. Everything of ours that needs YAML comes here,
 * so no static import brings it back onto the start's path.
 */
export function yamlModule(): Yaml {
  yaml ??= createRequire(import.meta.url)('yaml') as Yaml;
  return yaml;
}

export const parseYaml = (text: string): unknown => yamlModule().parse(text);
