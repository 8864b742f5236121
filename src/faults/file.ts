import { readFileSync } from 'node:fs';
import { parseYaml } from '../contract/index.ts';
import type { Contract } from '../contract/index.ts';
import { ApiError } from '../errors/index.ts';
import { checkRules } from './check.ts';
import type { RuleInput } from './types.ts';

export interface FaultFile {
  rules: RuleInput[];
  seed?: string;
}

/**
 * A fault file (`--faults FILE`, YAML or JSON): the body `POST /_emulator/faults` takes, checked by the same
 * schema. A file that does not parse or check is refused whole, with the fields that are wrong.
 */
export function readFaultFile(path: string, contract: Pick<Contract, 'body'>): FaultFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the fault file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    throw new Error(`the fault file ${path} is not YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  try {
    const file = contract.body<FaultFile>('admin', 'AddFaultsRequest', parsed);
    checkRules(file.rules);
    return file;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const fields = (err.details ?? []).map((d) => `${d.field || '(the file)'}: ${d.message}`).join('; ');
    throw new Error(`the fault file ${path} is not a rule set: ${fields || err.message}`);
  }
}
