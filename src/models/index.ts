export { loadTextModels } from './text-models.ts';
export type { TextModel } from './text-models.ts';
export { modelList, modelById, pricingList } from './catalog.ts';
