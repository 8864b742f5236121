import fc from 'fast-check';
import { createContract } from '../../src/contract/index.ts';
import { socialNote } from '../support/harness.ts';
import { params } from './bad-input/budget.ts';
import { nastyId, queryArb, scenarioHeader, visible } from './bad-input/cases.ts';
import { PUBLIC_URL, component } from './bad-input/documents.ts';
import { codeOf, exchange, expectError, expectStatus } from './bad-input/exchange.ts';
import type { World } from './bad-input/exchange.ts';
import { mutated } from './bad-input/mutations.ts';
import { fuzzPart } from './bad-input/part.ts';
import { fromSchema } from './bad-input/schema-arbitraries.ts';
import { asA, withWorld } from './bad-input/world.ts';

/**
 * Bad input, fuzzed, this part: POST /v1/tasks (bodies generated from the OpenAPI schemas, then mutated;
 * Idempotency-Key at its limits; traversal in file addresses), and GET /v1/tasks, GET /v1/tasks/{id} and
 * POST /v1/tasks/{id}/cancel with the ids of others, traversal and junk.
 *
 * One of the suite's parts (test/fuzz/bad-input-*.fuzz.ts), which vitest runs on different workers; the shared
 * machinery, the budget and how to replay a failure are in test/fuzz/bad-input/.
 */

const { runs, fuzz, check, count } = fuzzPart('tasks');

// ---------------------------------------------------------------------------------------------------------------
// POST /v1/tasks

/** Each model's input schema, as the emulator finds it (SubmitTaskRequest's discriminator, then the branch's `input`). */
const INPUT_SCHEMAS = Object.fromEntries([...createContract().taskModels.values()].map((m) => [m.id, `#/components/schemas/${m.schemaName}`]));
const submitFromSchema = fc.oneof(
  ...Object.entries(INPUT_SCHEMAS).map(([model, ref]) =>
    fc.record(
      {
        model: fc.constant(model),
        input: fromSchema('service', { $ref: ref }),
        webhook_url: fromSchema('service', { type: 'string', format: 'uri', maxLength: 2048 }),
        metadata: fromSchema('service', component('service', 'Metadata')),
      },
      { requiredKeys: ['model', 'input'] },
    ),
  ),
);
const submitSeeds = fc.oneof(
  { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 30 }).map((note) => socialNote({ note })) },
  {
    weight: 2,
    arbitrary: fc.record({
      model: fc.constant('video-gen-2.0-fast'),
      input: fc.record({ prompt: fc.string({ minLength: 1, maxLength: 40 }), duration: fc.integer({ min: 4, max: 15 }), resolution: fc.constantFrom('480p', '720p', '1080p') }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ model: 'avatar-photo', input: { image: 'https://example.com/p.png', audio: 'https://example.com/a.mp3' } }) },
  { weight: 4, arbitrary: submitFromSchema },
);

const idempotencyCases = fc.oneof(
  fc.integer({ min: 1, max: 64 }).chain((n) => fc.string({ unit: visible, minLength: n, maxLength: n })).map((k) => ({ key: k, ok: true })),
  fc.string({ unit: visible, minLength: 65, maxLength: 80 }).map((k) => ({ key: k, ok: false })),
  fc.constantFrom('café', 'ÿÿÿÿ', 'a b', '\t', ' ', '', Buffer.from('日本', 'utf8').toString('latin1'), 'x'.repeat(63) + 'é').map((k) => ({ key: k, ok: false })),
);

/** File addresses that point outside the caller's files; never accepted. */
function traversalAddresses(w: World): string[] {
  return [
    'file_../../etc/passwd', 'file_1/../2', 'file_0', 'file_-1', 'file_99999999999999999999', w.foreignFile.id,
    `${PUBLIC_URL}/files/${w.foreignFile.name}`, `${PUBLIC_URL}/files/../../package.json`, `${PUBLIC_URL}/files/..%2F..%2Fpackage.json`,
    `${PUBLIC_URL}/files/%2e%2e/%2e%2e/package.json`, `${PUBLIC_URL}/files/`, `${PUBLIC_URL}/files/${w.ownFile.name}/../${w.foreignFile.name}`,
    `${PUBLIC_URL}/files/__proto__`, `${PUBLIC_URL}/files/constructor`, `${w.ownFile.id}/../${w.foreignFile.id}`, 'file:///etc/passwd',
    `${w.ownFile.id} `, ` ${w.ownFile.id}`,
  ];
}

fuzz(`POST /v1/tasks: schema-derived bodies and their mutations, Idempotency-Key at its limits, traversal in file addresses (${runs.submit} cases)`, async () => {
  await withWorld(async (w) => {
    const addresses = traversalAddresses(w);
    /** Idempotency keys used so far, with the body they were first used with. */
    const firstUse = new Map<string, string>();
    const kind = fc.oneof(
      { weight: 8, arbitrary: fc.record({ kind: fc.constant('mutated' as const), body: mutated(submitSeeds), scenario: scenarioHeader }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('idempotency' as const), idem: idempotencyCases, note: fc.string({ minLength: 1, maxLength: 20 }) }) },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('traversal' as const),
          address: fc.constantFrom(...addresses),
          where: fc.constantFrom('avatar-image', 'avatar-audio', 'video-frames', 'video-videos', 'video-images'),
        }),
      },
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const headers: Record<string, string> = { ...asA(w) };
        if (k.kind === 'mutated') {
          if (k.scenario !== undefined) headers['X-Emulator-Scenario'] = k.scenario;
          await exchange(w, { method: 'POST', path: '/v1/tasks', headers, body: { kind: 'json', value: k.body } });
        } else if (k.kind === 'idempotency') {
          headers['Idempotency-Key'] = k.idem.key;
          const value = socialNote({ note: `https://notes.example.com/n/${k.note}` });
          const first = firstUse.get(k.idem.key);
          await exchange(w, {
            method: 'POST',
            path: '/v1/tasks',
            headers,
            body: { kind: 'json', value },
            expect: (res) =>
              !k.idem.ok
                ? res.status === 422 && codeOf(res) === 'invalid_params' && JSON.stringify(res.body).includes('Idempotency-Key')
                  ? []
                  : [`a bad Idempotency-Key must be 422 invalid_params naming it, got ${res.status}`]
                : first === undefined || first === JSON.stringify(value)
                  ? expectStatus(200)(res)
                  : expectError(409, 'idempotency_conflict')(res),
          });
          if (k.idem.ok && first === undefined) firstUse.set(k.idem.key, JSON.stringify(value));
        } else {
          const input =
            k.where === 'avatar-image'
              ? { model: 'avatar-photo', input: { image: k.address, audio: 'https://example.com/a.mp3' } }
              : k.where === 'avatar-audio'
                ? { model: 'avatar-photo', input: { image: 'https://example.com/p.png', audio: k.address } }
                : k.where === 'video-frames'
                  ? { model: 'video-gen-2.0-fast', input: { mode: 'frames', prompt: 'x', image: k.address } }
                  : k.where === 'video-videos'
                    ? { model: 'video-gen-2.0-fast', input: { mode: 'video', prompt: 'x', videos: [k.address] } }
                    : { model: 'video-gen-2.0-fast', input: { mode: 'reference', prompt: 'x', images: [k.address] } };
          await exchange(w, { method: 'POST', path: '/v1/tasks', headers, body: { kind: 'json', value: input }, expect: expectError(422, 'invalid_params') });
        }
      }),
      params(runs.submit),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// GET /v1/tasks, GET /v1/tasks/{id}, POST /v1/tasks/{id}/cancel

fuzz(`GET /v1/tasks (query), GET /v1/tasks/{id}, POST /v1/tasks/{id}/cancel: ids of others, traversal, junk (${runs.tasksRead} cases)`, async () => {
  await withWorld(async (w) => {
    const idArb = fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom(...w.ownTasks).map((id) => ({ id, foreign: false })) },
      { weight: 2, arbitrary: fc.constant({ id: w.foreignTask, foreign: true }) },
      { weight: 3, arbitrary: nastyId.map((id) => ({ id, foreign: false })) },
      { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }).map((s) => ({ id: encodeURIComponent(s), foreign: false })) },
    );
    const kind = fc.oneof(
      fc.record({ kind: fc.constant('list' as const), query: queryArb('service', '/v1/tasks', 'get') }),
      fc.record({ kind: fc.constantFrom('get' as const, 'cancel' as const), target: idArb, suffix: fc.constantFrom('', '/', '?x=1', '?__proto__=1') }),
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        if (k.kind === 'list') {
          await exchange(w, { method: 'GET', path: `/v1/tasks${k.query}`, headers: asA(w) });
          return;
        }
        const path = `/v1/tasks/${k.target.id}${k.kind === 'cancel' ? '/cancel' : ''}${k.suffix}`;
        await exchange(w, {
          method: k.kind === 'get' ? 'GET' : 'POST',
          path,
          headers: asA(w),
          // Another account's task is not there.
          ...(k.target.foreign ? { expect: expectError(404, 'not_found') } : {}),
        });
      }),
      params(runs.tasksRead),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Last: the count

count();
