import { loadTextModels } from '../../src/models/index.ts';
import type { TextModel } from '../../src/models/index.ts';

/** The text models of fixtures/text-models.json, as the emulator reads them: expected prices come from here. */
export const TEXT_MODELS: TextModel[] = loadTextModels();

export function textModel(id: string): TextModel {
  const found = TEXT_MODELS.find((m) => m.id === id);
  if (!found) throw new Error(`fixtures/text-models.json has no text model ${id}`);
  return found;
}
