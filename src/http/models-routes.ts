import type { Routes } from './route-table.ts';
import { modelById, modelList, pricingList } from '../models/index.ts';
import type { AppDeps } from './context.ts';

/** @see reference "Other endpoints": GET /v1/models/{id} (with params_schema), the model list, GET /v1/pricing */
export function modelsRoutes(deps: Pick<AppDeps, 'contract' | 'textModels'>, router: Routes): void {
  const { contract, textModels } = deps;
  const doc = contract.documents.service;
  router.get('/models', (_req, res) => void res.json(modelList(doc, contract.taskModels, textModels)));
  router.get('/models/:id', (req, res) => void res.json(modelById(doc, contract.taskModels, textModels, req.params.id)));
  router.get('/pricing', (_req, res) => void res.json(pricingList(textModels)));
}
