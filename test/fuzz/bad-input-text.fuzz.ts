import fc from 'fast-check';
import { params } from './bad-input/budget.ts';
import { scenarioHeader } from './bad-input/cases.ts';
import { TEXT_MODELS, component } from './bad-input/documents.ts';
import { exchange, expectError } from './bad-input/exchange.ts';
import { mutated, withModel } from './bad-input/mutations.ts';
import { fuzzPart } from './bad-input/part.ts';
import { fromSchema, schemaLike } from './bad-input/schema-arbitraries.ts';
import { asA, withWorld } from './bad-input/world.ts';

/**
 * Bad input, fuzzed, this part: the three text endpoints (POST /v1/chat/completions, /v1/responses,
 * /v1/messages): bodies generated from the OpenAPI schemas, then mutated; JSON Schemas inside bodies; scenario
 * headers; auth variants.
 *
 * One of the suite's parts (test/fuzz/bad-input-*.fuzz.ts), which vitest runs on different workers; the shared
 * machinery, the budget and how to replay a failure are in test/fuzz/bad-input/.
 */

const { runs, fuzz, check, count } = fuzzPart('text');

// ---------------------------------------------------------------------------------------------------------------
// The three text endpoints

const chatSeeds = fc.oneof(
  { weight: 4, arbitrary: withModel(fromSchema('service', component('service', 'ChatCompletionRequest')), TEXT_MODELS) },
  {
    weight: 2,
    arbitrary: fc.record({
      model: fc.constantFrom(...TEXT_MODELS),
      messages: fc.constant([{ role: 'user', content: 'Say hello.' }]),
      response_format: fc.record({ type: fc.constant('json_schema'), json_schema: fc.record({ name: fc.constant('x'), schema: schemaLike }) }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      model: fc.constantFrom(...TEXT_MODELS),
      messages: fc.constant([{ role: 'user', content: 'Call it.' }]),
      tools: fc.array(fc.record({ type: fc.constant('function'), function: fc.record({ name: fc.constantFrom('f', 'g'), parameters: schemaLike }) }), { minLength: 1, maxLength: 2 }),
      tool_choice: fc.constantFrom<unknown>('required', 'auto', 'none', { type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'zz' } }),
    }),
  },
);
const responsesSeeds = withModel(fromSchema('service', component('service', 'ResponseRequest')), TEXT_MODELS);
const messagesSeeds = withModel(fromSchema('service', component('service', 'MessageRequest')), TEXT_MODELS);

for (const [path, seeds, numRuns] of [
  ['/v1/chat/completions', chatSeeds, runs.chat],
  ['/v1/responses', responsesSeeds, runs.responses],
  ['/v1/messages', messagesSeeds, runs.messages],
] as const) {
  fuzz(`POST ${path}: schema-derived bodies and their mutations, schemas inside bodies, scenario headers, auth variants (${numRuns} cases)`, async () => {
    await withWorld(async (w) => {
      const auth: fc.Arbitrary<Record<string, string>> = fc.oneof(
        { weight: 12, arbitrary: fc.constant<Record<string, string>>(asA(w)) },
        { weight: 1, arbitrary: fc.constant<Record<string, string>>(path === '/v1/messages' ? { 'x-api-key': w.keyA } : { Authorization: `bearer   ${w.keyA}  ` }) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom<Record<string, string>>({}, { Authorization: 'Bearer constructor' }, { Authorization: 'Bearer __proto__' }, { Authorization: `Basic ${w.keyA}` }, { Authorization: `Bearer ${w.keyA} extra` }, { 'x-api-key': '__proto__' }, { Authorization: `Bearer ${'k'.repeat(8000)}` })
            .map((h) => ({ ...h, unauthenticated: 'yes' })),
        },
      );
      await check(
        fc.asyncProperty(mutated(seeds), auth, scenarioHeader, async (body, authHeaders, scenario) => {
          const { unauthenticated, ...headers } = authHeaders;
          if (scenario !== undefined) headers['X-Emulator-Scenario'] = scenario;
          await exchange(w, {
            method: 'POST',
            path,
            headers,
            body: { kind: 'json', value: body },
            ...(unauthenticated ? { expect: expectError(401, 'invalid_api_key') } : {}),
          });
        }),
        params(numRuns),
      );
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Last: the count

count();
