import fc from 'fast-check';
import type { Response } from 'supertest';
import request from 'supertest';
import { socialNote } from '../support/harness.ts';
import { params } from './bad-input/budget.ts';
import { JSON_ENDPOINTS, MALFORMED, NON_OBJECTS, endpointArb, headersFor } from './bad-input/cases.ts';
import type { JsonEndpoint } from './bad-input/cases.ts';
import { ADMIN, isObject } from './bad-input/documents.ts';
import { codeOf, excerpt, exchange, expectError, expectNot, expectStatus, groupOf } from './bad-input/exchange.ts';
import type { Body, Verb, World } from './bad-input/exchange.ts';
import { PROTO_KEYS, PROTO_VALUES, childKeys, childOf, keyArb, mutate, nastyValue, withChild, withoutChild } from './bad-input/mutations.ts';
import { fuzzPart } from './bad-input/part.ts';
import { RawJson, deepText, dupObject, toJsonText } from './bad-input/raw-json.ts';
import { asA, call, TEXT_BODY_LIMIT, withWorld } from './bad-input/world.ts';

/**
 * Bad input, fuzzed, this part: wire-level nasties on every endpoint that takes a JSON body: wrong
 * content types, charsets and encodings; malformed, non-object and truncated JSON, duplicate keys, invalid UTF-8;
 * nesting up to 10,000 levels; bodies at the 1 MB limit and just over (uploads at 50 MB); `__proto__` /
 * `constructor` / `prototype` keys.
 *
 * One of the suite's parts (test/fuzz/bad-input-*.fuzz.ts), which vitest runs on different workers; the shared
 * machinery, the budget and how to replay a failure are in test/fuzz/bad-input/.
 */

const { runs, fuzz, check, once, count } = fuzzPart('bodies');

// ---------------------------------------------------------------------------------------------------------------
// Wire-level nasties on every endpoint that takes a JSON body

const WRONG_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/octet-stream', 'text/json', 'application/jsonx', 'image/png', 'multipart/form-data; boundary=fuzz'];
const WRONG_CHARSETS = ['application/json; charset=latin1', 'application/json; charset=utf-16', 'application/json; charset="iso-8859-1"', 'application/json; charset=ascii'];
const JSON_TYPES = ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.api+json', 'application/json;charset=UTF8', 'application/json; charset="utf-8"'];

fuzz(`wrong content types, charsets and encodings on every JSON endpoint: 415 (400 on text endpoints) (${runs.contentTypes} cases)`, async () => {
  await withWorld(async (w) => {
    const kind = fc.oneof(
      { weight: 3, arbitrary: fc.record({ endpoint: endpointArb, type: fc.constantFrom(...WRONG_TYPES, null), as: fc.constantFrom('json', 'form', 'multipart') }).map((k) => ({ ...k, kind: 'wrong-type' as const })) },
      { weight: 2, arbitrary: fc.record({ endpoint: endpointArb, type: fc.constantFrom(...WRONG_CHARSETS) }).map((k) => ({ ...k, kind: 'wrong-charset' as const })) },
      { weight: 2, arbitrary: fc.record({ endpoint: endpointArb, type: fc.constantFrom(...JSON_TYPES) }).map((k) => ({ ...k, kind: 'json-type' as const })) },
      { weight: 1, arbitrary: fc.record({ endpoint: endpointArb, encoding: fc.constantFrom('gzip', 'deflate', 'br', 'compress', 'x-unknown', 'identity, gzip') }).map((k) => ({ ...k, kind: 'encoding' as const })) },
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const path = k.endpoint.path(w);
        const headers = headersFor(w, path);
        const valid = k.endpoint.valid(w);
        const text = groupOf(path) !== 'general';
        const wrongType = text ? expectError(400, 'bad_request') : expectError(415, 'unsupported_media_type');
        if (k.kind === 'wrong-type') {
          const body: Body =
            k.as === 'multipart'
              ? { kind: 'multipart', fields: Object.entries({ ...valid, x: 1 }).map(([name, v]) => [name, typeof v === 'string' ? v : JSON.stringify(v)]), files: [] }
              : k.as === 'form'
                ? { kind: 'raw', contentType: k.type, bytes: new URLSearchParams(Object.entries({ ...valid, x: 1 }).map(([n, v]): [string, string] => [n, JSON.stringify(v)])).toString() }
                : { kind: 'raw', contentType: k.type, bytes: JSON.stringify(valid) };
          // A multipart body is sent with its own content type, whatever was drawn; /v1/files takes one.
          const takesMultipart = path === '/v1/files' && (body.kind === 'multipart' || String(k.type).startsWith('multipart/'));
          await exchange(w, { method: k.endpoint.method, path, headers, body, ...(takesMultipart ? {} : { expect: wrongType }) });
        } else if (k.kind === 'wrong-charset') {
          await exchange(w, { method: k.endpoint.method, path, headers, body: { kind: 'raw', contentType: k.type, bytes: JSON.stringify(valid) }, expect: wrongType });
        } else if (k.kind === 'json-type') {
          await exchange(w, { method: k.endpoint.method, path, headers, body: { kind: 'raw', contentType: k.type, bytes: JSON.stringify(valid) }, expect: (res) => [...expectNot(415)(res), ...(res.status === 400 ? [`a JSON content type was refused: ${String(codeOf(res))}`] : [])] });
        } else {
          await exchange(w, { method: k.endpoint.method, path, headers, body: { kind: 'raw', contentType: 'application/json', bytes: JSON.stringify(valid), encoding: k.encoding } });
        }
      }),
      params(runs.contentTypes),
    );
  });
});

/** Bytes that are not UTF-8: stray continuation bytes, truncated sequences, overlongs, encoded surrogates. */
const BAD_UTF8 = [[0xff], [0xfe, 0xff], [0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]];

fuzz(`malformed JSON, non-object JSON, truncated bodies, duplicate keys, invalid UTF-8 on every JSON endpoint (${runs.malformed} cases)`, async () => {
  await withWorld(async (w) => {
    const kind = fc.oneof(
      fc.record({ kind: fc.constant('malformed' as const), endpoint: endpointArb, text: fc.constantFrom(...MALFORMED) }),
      fc.record({ kind: fc.constant('non-object' as const), endpoint: endpointArb, text: fc.constantFrom(...NON_OBJECTS) }),
      fc.record({ kind: fc.constant('truncated' as const), endpoint: endpointArb, at: fc.nat() }),
      fc.record({ kind: fc.constant('duplicate' as const), endpoint: endpointArb, pick: fc.nat(), value: nastyValue, first: fc.boolean() }),
      fc.record({ kind: fc.constant('bad-utf8' as const), endpoint: endpointArb, bytes: fc.constantFrom(...BAD_UTF8), at: fc.nat(), inString: fc.boolean() }),
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const path = k.endpoint.path(w);
        const headers = headersFor(w, path);
        const valid = k.endpoint.valid(w);
        const json = (bytes: Buffer | string, expect?: (res: Response) => string[]): Promise<Response> =>
          exchange(w, { method: k.endpoint.method, path, headers, body: { kind: 'raw', contentType: 'application/json', bytes }, ...(expect ? { expect } : {}) });
        switch (k.kind) {
          case 'malformed':
          case 'non-object':
            await json(k.text, expectError(400, 'bad_request'));
            return;
          case 'truncated': {
            const full = JSON.stringify(valid);
            const cut = full.slice(0, 1 + (k.at % (full.length - 1)));
            await json(cut, expectError(400, 'bad_request'));
            return;
          }
          case 'duplicate': {
            const entries = Object.entries(valid);
            const [key] = entries[k.pick % entries.length] ?? ['x'];
            const extra: [string, unknown] = [key, k.value];
            await json(toJsonText(dupObject(k.first ? [extra, ...entries] : [...entries, extra])));
            return;
          }
          case 'bad-utf8': {
            const full = Buffer.from(JSON.stringify(valid));
            // Inside a string value (after an opening quote) or anywhere.
            const quotes = [...full.keys()].filter((i) => full[i] === 0x22);
            const at = k.inString && quotes.length > 0 ? (quotes[k.at % quotes.length] ?? 0) + 1 : k.at % (full.length + 1);
            await json(Buffer.concat([full.subarray(0, at), Buffer.from(k.bytes), full.subarray(at)]));
            return;
          }
        }
      }),
      params(runs.malformed),
    );
  });
});

/**
 * Bodies whose free-form objects (schemas of `type: object` with no listed fields: tool parameters, response
 * schemas, content sources, tool calls, usage, file overrides) are present as `{}`: the places where any depth of
 * nesting passes validation and reaches the emulator's code and its store.
 */
const RICH_BODIES: { method: Verb; path: (w: World, freshTask: string) => string; body: () => unknown }[] = [
  {
    method: 'POST',
    path: () => '/v1/chat/completions',
    body: () => ({
      model: 'svc-text-lite',
      messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [{}] }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } },
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
      tool_choice: 'required',
      stream_options: {},
    }),
  },
  {
    method: 'POST',
    path: () => '/v1/chat/completions',
    body: () => ({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }),
  },
  {
    method: 'POST',
    path: () => '/v1/messages',
    body: () => ({ model: 'svc-text-lite', max_tokens: 16, system: [{ type: 'text', text: 'x', source: {} }], messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }),
  },
  { method: 'POST', path: () => '/v1/responses', body: () => ({ model: 'svc-text-lite', input: 'x', extra: {} }) },
  { method: 'POST', path: () => '/v1/tasks', body: () => ({ ...socialNote(), metadata: {}, params: {} }) },
  { method: 'POST', path: () => '/v1/files', body: () => ({ content: 'aGVsbG8=', extra: {} }) },
  { method: 'POST', path: (_w, task) => `/_emulator/tasks/${task}/complete`, body: () => ({ output: { usage: {}, files: [{}] } }) },
  { method: 'POST', path: () => '/_emulator/scenarios', body: () => ({ scenarios: [{ name: 'deep', outcome: 'succeeded', output: { usage: {}, files: [{}] }, per_model: {} }] }) },
  { method: 'POST', path: () => '/_emulator/accounts', body: () => ({ extra: {} }) },
];

/** Paths to every `{}` in a body. */
function emptyObjectSites(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (isObject(value) && Object.keys(value).length === 0) return [at];
  return childKeys(value).flatMap((k) => emptyObjectSites(childOf(value, k), [...at, k]));
}
const setAt = (value: unknown, at: (string | number)[], leaf: unknown): unknown => {
  const [k, ...rest] = at;
  return k === undefined ? leaf : withChild(value, k, setAt(childOf(value, k), rest, leaf));
};

fuzz(`deep nesting (up to 10,000 levels) in every free-form object of the documents, and anywhere else (${runs.deep} cases)`, async () => {
  await withWorld(async (w) => {
    const refill = (await call(w.t, 'POST', '/_emulator/accounts', ADMIN, { points: '999999999.000' })).body as { id: string };
    const refillKey = ((await call(w.t, 'POST', `/_emulator/accounts/${refill.id}/keys`, ADMIN, {})).body as { key: string }).key;
    const kind = fc.record({
      site: fc.oneof({ weight: 3, arbitrary: fc.tuple(fc.constantFrom(...RICH_BODIES), fc.nat()).map(([rich, n]) => ({ rich, n })) }, { weight: 1, arbitrary: endpointArb.map((endpoint) => ({ endpoint })) }),
      depth: fc.constantFrom(100, 1000, 5000, 10_000),
      shape: fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>,
      path: fc.array(fc.nat(), { maxLength: 4 }),
      op: fc.constantFrom('set', 'add') as fc.Arbitrary<'set' | 'add'>,
      key: keyArb,
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const deep = new RawJson(deepText(k.depth, k.shape));
        let method: Verb;
        let path: string;
        let value: unknown;
        if ('rich' in k.site) {
          // Control steps need a task that is not finished yet.
          const fresh = await request(w.t.emulator.app).post('/v1/tasks').set({ Authorization: `Bearer ${refillKey}` }).send(socialNote());
          const body = k.site.rich.body();
          const sites = emptyObjectSites(body);
          method = k.site.rich.method;
          path = k.site.rich.path(w, String((fresh.body as { id?: unknown }).id));
          value = setAt(body, sites[k.site.n % sites.length] ?? [], deep);
        } else {
          method = k.site.endpoint.method;
          path = k.site.endpoint.path(w);
          value = mutate(k.site.endpoint.valid(w), k.path, { path: k.path, op: k.op, key: k.key, pick: 0, value: deep });
        }
        await exchange(w, { method, path, headers: headersFor(w, path), body: { kind: 'json', value } });
      }),
      params(runs.deep),
    );
  });
});

const MB = 1024 * 1024;
/** The body limit of an endpoint: the text endpoints have their own (a message may carry images). */
const limitOf = (path: string): number => (/^\/v1\/(chat\/completions|responses|messages)$/.test(path) ? TEXT_BODY_LIMIT : MB);
fuzz(`bodies at the limit and just over: 1 MB, and the text endpoints' own (huge strings and arrays, multibyte padding); uploads at 50 MB and just over (${runs.sizes} cases)`, async () => {
  await withWorld(async (w) => {
    // /v1/files takes larger bodies (50 MB files); its limits are the upload cases below.
    const limited = JSON_ENDPOINTS.filter((e) => e.path(w) !== '/v1/files');
    // The upload limits, once each: a 50 MB file is taken, one byte more is 413, as multipart and as Base64 JSON.
    for (const [form, size] of [['multipart', 50 * MB], ['multipart', 50 * MB + 1], ['json', 50 * MB + 1]] as const) {
      const body: Body =
        form === 'multipart'
          ? { kind: 'multipart', fields: [], files: [{ field: 'file', bytes: Buffer.alloc(size, 7), filename: 'big.mp4', contentType: 'video/mp4' }] }
          : { kind: 'raw', contentType: 'application/json', bytes: `{"filename":"big.mp4","content":"${Buffer.alloc(size, 7).toString('base64')}"}` };
      await once(w, { method: 'POST', path: '/v1/files', headers: asA(w), body, expect: size > 50 * MB ? expectError(413, 'payload_too_large') : expectStatus(200) });
    }
    const kind = fc.record({
      endpoint: fc.constantFrom(...limited),
      delta: fc.constantFrom(-1, 0, 1, 2, -4096),
      pad: fc.constantFrom('string', 'array', 'multibyte', 'content') as fc.Arbitrary<'string' | 'array' | 'multibyte' | 'content'>,
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const path = k.endpoint.path(w);
        const target = limitOf(path) + k.delta;
        const base = k.endpoint.valid(w);
        // Pad a valid body with an ignored field (or a message's content) to exactly `target` bytes.
        const shell = (fill: string): string => {
          if (k.pad === 'content' && Array.isArray(base['messages'])) return JSON.stringify({ ...base, messages: [{ role: 'user', content: fill }] });
          if (k.pad === 'content' && typeof base['input'] === 'string') return JSON.stringify({ ...base, input: fill });
          return JSON.stringify({ ...base, pad: fill });
        };
        let text: string;
        if (k.pad === 'array') {
          const room = target - Buffer.byteLength(shell('')) + 2; // '""' replaced by '[...]'
          const count = Math.max(0, Math.floor((room - 1) / 2));
          let arr = `[${new Array(count).fill('0').join(',')}]`;
          while (Buffer.byteLength(arr) < room) arr = arr.replace('[', '[ ');
          text = shell('').replace('"pad":""', `"pad":${arr}`);
        } else if (k.pad === 'multibyte') {
          const room = target - Buffer.byteLength(shell(''));
          text = shell('é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2));
        } else {
          text = shell('x'.repeat(Math.max(0, target - Buffer.byteLength(shell('')))));
        }
        const bytes = Buffer.byteLength(text);
        await exchange(w, {
          method: k.endpoint.method,
          path,
          headers: headersFor(w, path),
          body: { kind: 'raw', contentType: 'application/json', bytes: text },
          expect: bytes > limitOf(path) ? expectError(413, 'payload_too_large') : expectNot(413),
        });
      }),
      params(runs.sizes),
    );
  });
});

fuzz(`__proto__ / constructor / prototype keys in input, params, metadata and everywhere else: no pollution, echoed as data (${runs.protoKeys} cases)`, async () => {
  await withWorld(async (w) => {
    const kind = fc.record({
      endpoint: fc.oneof({ weight: 4, arbitrary: fc.constant(JSON_ENDPOINTS[0] as JsonEndpoint) }, { weight: 3, arbitrary: endpointArb }),
      where: fc.constantFrom('input', 'params', 'metadata', 'top', 'anywhere'),
      key: fc.constantFrom(...PROTO_KEYS),
      value: fc.oneof(fc.constantFrom(...PROTO_VALUES), fc.constantFrom<unknown>('yes', 1, null, [], { polluted: 'yes' }, { prototype: { polluted: 'yes' } })),
      path: fc.array(fc.nat(), { maxLength: 3 }),
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const path = k.endpoint.path(w);
        const valid = k.endpoint.valid(w);
        const put = (obj: unknown, key: string, value: unknown): unknown => (isObject(obj) ? withChild(obj, key, value) : obj);
        let value: unknown;
        if (k.where === 'input' || k.where === 'params') value = put(withoutChild(valid, 'input'), k.where, put(isObject(valid['input']) ? valid['input'] : {}, k.key, k.value));
        else if (k.where === 'metadata') value = put(valid, 'metadata', Object.fromEntries([['note', 'x'], [k.key, k.value]]));
        else if (k.where === 'top') value = put(valid, k.key, k.value);
        else value = mutate(valid, k.path, { path: k.path, op: 'add', key: k.key, pick: 0, value: k.value });
        await exchange(w, {
          method: k.endpoint.method,
          path,
          headers: headersFor(w, path),
          body: { kind: 'json', value },
          expect: (res) => {
            // Metadata is echoed unchanged: a string under `__proto__` is an ordinary key.
            if (path !== '/v1/tasks' || k.where !== 'metadata' || res.status !== 200 || typeof k.value !== 'string') return [];
            const metadata = (res.body as { metadata?: unknown }).metadata;
            return isObject(metadata) && Object.hasOwn(metadata, k.key) && metadata[k.key] === k.value ? [] : [`metadata.${k.key} was not echoed: ${excerpt(metadata)}`];
          },
        });
      }),
      params(runs.protoKeys),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Last: the count

count();
