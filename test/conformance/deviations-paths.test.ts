import Big from 'big.js';
import { describe, expect, it } from 'vitest';
import type { SuiteReport } from '../../src/conformance/index.ts';
import { deviate, editJson, expectAltered, expectFailedExactly, expectFailure, is, isJson, runAgainst, tasksOf, useDeviations } from './deviating.ts';
import type { Deviation, Forwarded, Proxy } from './deviating.ts';

// Paths the suite did not walk before (issue 39): the 1080p prices and both price columns, the fast and max avatar
// qualities, the list's model filter and default page size, the file records of video results, numeric strings and
// `params` in input, and the type and size of uploads. Each deviation here passes the checks the suite had (each
// run selects them beside the new ones, and they pass) and fails the new check that walks its path, and the rule
// of behaviour that judges the same traffic where there is one. The harness: ./deviating.ts.

useDeviations();

type Json = Record<string, unknown>;
const inputOf = (task: Json): Json => (task['input'] ?? {}) as Json;
const pointsOf = (task: Json): Record<string, string> => task['points'] as Record<string, string>;
const outputOf = (task: Json): Json => (task['output'] ?? {}) as Json;
const filesOf = (task: Json): Json[] => (Array.isArray(outputOf(task)['files']) ? outputOf(task)['files'] : []) as Json[];
const points = (value: Big.BigSource): string => new Big(value).round(3, Big.roundHalfUp).toFixed(3);

/** A deviation that edits every task a task answer carries (submit, read, cancel, list items); `edit` says whether it changed one. */
function editTasks(edit: (task: Json, req: Forwarded) => boolean): Deviation {
  return {
    answer(answer, req) {
      if (!/^\/v1\/tasks/.test(req.path) || !isJson(answer) || answer.status !== 200) return undefined;
      let changed = false;
      const edited = editJson(answer, (body) => {
        for (const task of tasksOf(body)) changed = edit(task, req) || changed;
      });
      return changed ? edited : undefined;
    },
  };
}

/** Settles a succeeded task at `charged`: the rest of the freeze refunded, none when more is charged (collected). */
function settleAt(task: Json, charged: string): void {
  const p = pointsOf(task);
  const left = new Big(p['frozen'] ?? '0').minus(charged);
  p['charged'] = charged;
  p['refunded'] = points(left.lt(0) ? 0 : left);
}

const failureOf = (report: SuiteReport, id: string): NonNullable<SuiteReport['results'][number]['failure']> => {
  const failure = report.results.find((r) => r.id === id)?.failure;
  if (!failure) throw new Error(`${id} did not fail`);
  return failure;
};

/** The path of the read a failure names (a task's GET, whose id the check made), checked to be one. */
function readPath(report: SuiteReport, id: string): string {
  const path = failureOf(report, id).request?.path ?? '';
  expect(path).toMatch(/^\/v1\/tasks\/T\d{12}[A-Z0-9]{6}$/);
  return path;
}

/** A rule of behaviour failed with a message matching `message`. */
function expectRuleFailed(report: SuiteReport, id: string, message: RegExp): void {
  const result = report.results.find((r) => r.id === id);
  expect(result?.status, `${id} fails`).toBe('failed');
  expect(result?.failure?.message).toMatch(message);
}

const isVideo = (task: Json): boolean => task['model'] === 'video-gen-2.0-fast';
const hasReferenceVideos = (task: Json): boolean => Array.isArray(inputOf(task)['videos']);

describe('prices', () => {
  it("fails billing.freeze.video-1080p-5s and the freeze rule when 1080p is priced at 720p's 237.6 a second", async () => {
    const ONLY = ['billing.freeze.*'];
    const p = await deviate(
      editTasks((task) => {
        if (!isVideo(task) || inputOf(task)['resolution'] !== '1080p' || hasReferenceVideos(task)) return false;
        const frozen = points(new Big('237.6').times(Number(inputOf(task)['duration'])));
        const refunded = pointsOf(task)['refunded'] !== '0.000';
        pointsOf(task)['frozen'] = frozen;
        if (refunded) pointsOf(task)['refunded'] = frozen;
        return true;
      }),
    );
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/tasks$/);
    // The freezes the suite checked before (720p, 480p, the standard avatar, notes) pass.
    expectFailedExactly(report, ONLY, ['billing.freeze.video-1080p-5s', 'billing.freeze.on-submit']);
    const failure = expectFailure(p, report, 'billing.freeze.video-1080p-5s', { message: 'frozen 2937.500', method: 'POST', path: '/v1/tasks', expected: '2937.500', actual: '1188.000' });
    expect(failure.curl).toContain('"resolution":"1080p","duration":5');
    expectRuleFailed(report, 'billing.freeze.on-submit', /with points frozen 1188\.000, .*expected frozen 2937\.500/);
  });

  it("fails billing.charge.video-per-second and the price rule when a 480p success is charged at 720p's per-second price", async () => {
    const ONLY = ['billing.charge.*'];
    const p = await deviate(
      editTasks((task) => {
        if (!isVideo(task) || task['status'] !== 'succeeded' || inputOf(task)['resolution'] !== '480p' || hasReferenceVideos(task)) return false;
        settleAt(task, points(new Big('237.6').times(Number(inputOf(task)['duration']))));
        return true;
      }),
    );
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'GET', /^\/v1\/tasks\/T/);
    expectFailedExactly(report, ONLY, ['billing.charge.video-per-second', 'billing.charge.price']);
    expectFailure(p, report, 'billing.charge.video-per-second', {
      message: 'charged 388.800 (4 s × 97.2 at 480p)',
      method: 'GET',
      path: readPath(report, 'billing.charge.video-per-second'),
      expected: '388.800',
      actual: '950.400',
    });
    expectRuleFailed(report, 'billing.charge.price', /charged 950\.400, its price is 388\.800/);
  });

  it("fails billing.charge.video-per-token and the price rule when 1080p with a reference video is charged at 720p's 6,400 a million", async () => {
    const ONLY = ['billing.charge.*'];
    let tokens = 0;
    const p = await deviate(
      editTasks((task) => {
        if (!isVideo(task) || task['status'] !== 'succeeded' || inputOf(task)['resolution'] !== '1080p' || !hasReferenceVideos(task)) return false;
        tokens = Number((outputOf(task)['usage'] as Json)['output_tokens']);
        settleAt(task, points(new Big(tokens).times(6400).div(1_000_000)));
        return true;
      }),
    );
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'GET', /^\/v1\/tasks\/T/);
    expectFailedExactly(report, ONLY, ['billing.charge.video-per-token', 'billing.charge.price']);
    const exact = new Big(tokens).times(7000).div(1_000_000);
    expectFailure(p, report, 'billing.charge.video-per-token', {
      message: `charged ${exact.toString()} to the thousandth (${tokens} output tokens × 7000 per million at 1080p)`,
      method: 'GET',
      path: readPath(report, 'billing.charge.video-per-token'),
      expected: points(exact),
      actual: points(new Big(tokens).times(6400).div(1_000_000)),
    });
    expectRuleFailed(report, 'billing.charge.price', new RegExp(`its price is ${points(exact).replace('.', '\\.')}`));
  });

  it('fails the fast freeze and charge checks, and the freeze and price rules, when quality fast is billed as standard', async () => {
    const ONLY = ['billing.freeze.*', 'billing.charge.*'];
    const p = await deviate(
      editTasks((task) => {
        if (task['model'] !== 'avatar-photo' || inputOf(task)['quality'] !== 'fast') return false;
        const refunded = pointsOf(task)['refunded'] !== '0.000';
        pointsOf(task)['frozen'] = '60.000';
        if (task['status'] === 'succeeded') settleAt(task, points(Math.ceil(Number(outputOf(task)['duration'])) * 6));
        else if (refunded) pointsOf(task)['refunded'] = '60.000';
        return true;
      }),
    );
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/tasks$/);
    expectFailedExactly(report, ONLY, ['billing.freeze.avatar-fast', 'billing.charge.avatar-qualities', 'billing.freeze.on-submit', 'billing.charge.price']);
    expectFailure(p, report, 'billing.freeze.avatar-fast', { message: 'frozen 40.000', method: 'POST', path: '/v1/tasks', expected: '40.000', actual: '60.000' });
    expectFailure(p, report, 'billing.charge.avatar-qualities', {
      message: 'frozen 40.000 (10 s estimated × 4 for fast)',
      method: 'GET',
      path: readPath(report, 'billing.charge.avatar-qualities'),
      expected: '40.000',
      actual: '60.000',
    });
    expectRuleFailed(report, 'billing.charge.price', /charged 60\.000, its price is 40\.000/);
  });

  it('fails billing.charge.avatar-qualities and the price rule when a max avatar is charged as standard', async () => {
    const ONLY = ['billing.charge.*'];
    const p = await deviate(
      editTasks((task) => {
        if (task['model'] !== 'avatar-photo' || inputOf(task)['quality'] !== 'max' || task['status'] !== 'succeeded') return false;
        settleAt(task, points(Math.ceil(Number(outputOf(task)['duration'])) * 6));
        return true;
      }),
    );
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'GET', /^\/v1\/tasks\/T/);
    expectFailedExactly(report, ONLY, ['billing.charge.avatar-qualities', 'billing.charge.price']);
    expectFailure(p, report, 'billing.charge.avatar-qualities', {
      message: 'charged 80.000 (10 s rounded up × 8 for max)',
      method: 'GET',
      path: readPath(report, 'billing.charge.avatar-qualities'),
      expected: '80.000',
      actual: '60.000',
    });
  });
});

describe('lists', () => {
  // The list checks and rules by name: the paging check the suite had passes beside them.
  const ONLY = ['tasks.list.paging', 'tasks.list.model-filter', 'tasks.list.default-page-size', 'tasks.list.filter', 'tasks.list.full-page'];
  const withoutModel = (path: string): string => path.replace(/([?&])model=[^&]*&?/, '$1').replace(/[?&]$/, '');

  it('fails tasks.list.model-filter and the filter rule when the model filter is ignored', async () => {
    const p = await deviate({
      request(req) {
        if (!is(req, 'GET', /^\/v1\/tasks\?(.*&)?model=/)) return undefined;
        return { ...req, path: withoutModel(req.path) };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'GET', /^\/v1\/tasks\?model=/);
    expectFailedExactly(report, ONLY, ['tasks.list.model-filter', 'tasks.list.filter']);
    expectFailure(p, report, 'tasks.list.model-filter', { message: 'every item is of model avatar-photo', method: 'GET', path: '/v1/tasks?model=avatar-photo&limit=100' });
    expectRuleFailed(report, 'tasks.list.filter', /is of model social-notes-data, the filter is model=avatar-photo/);
  });

  it('fails tasks.list.default-page-size when the default page size is 10', async () => {
    const p = await deviate({
      request(req) {
        if (!is(req, 'GET', /^\/v1\/tasks(\?|$)/) || /[?&]limit=/.test(req.path)) return undefined;
        return { ...req, path: `${req.path}${req.path.includes('?') ? '&' : '?'}limit=10` };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'GET', /^\/v1\/tasks$/);
    // The check reads the default page as an account of its own (so the rule of the suite's account sees none of
    // it); the rule's breaking histories are in test/unit/observed/paging.test.ts.
    expectFailedExactly(report, ONLY, ['tasks.list.default-page-size']);
    expectFailure(p, report, 'tasks.list.default-page-size', { message: 'limit 20 when none is sent', method: 'GET', path: '/v1/tasks', expected: 20, actual: 10 });
  });
});

describe('result files', () => {
  const ONLY = ['files.result.*'];
  const editRecords = (model: (task: Json) => boolean, edit: (record: Json) => void): Deviation =>
    editTasks((task) => {
      if (!model(task) || task['status'] !== 'succeeded') return false;
      for (const record of filesOf(task)) edit(record);
      return true;
    });

  it('fails both result checks and the record rule when a video record has no cover', async () => {
    const p = await deviate(editRecords((task) => isVideo(task) || task['model'] === 'avatar-photo', (record) => void (record['cover_url'] = null)));
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'GET', /^\/v1\/tasks\/T/);
    expectFailedExactly(report, ONLY, ['files.result.video-record', 'files.result.avatar-record', 'files.result.record-fields']);
    for (const id of ['files.result.video-record', 'files.result.avatar-record']) {
      expectFailure(p, report, id, { message: "output.files[0].cover_url is the cover's own address", method: 'GET', path: readPath(report, id), expected: 'http(s)://… (not the video)', actual: null });
    }
    expectRuleFailed(report, 'files.result.record-fields', /output\.files\[0\] cover_url is null, expected the cover image address/);
  });

  it('fails files.result.video-record when a record states another size than its file downloads with', async () => {
    const p = await deviate(editRecords(isVideo, (record) => void (record['size'] = Number(record['size']) + 1)));
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'GET', /^\/v1\/tasks\/T/);
    // A size of whole bytes is still a size: only the download tells it is not this file's.
    expectFailedExactly(report, ONLY, ['files.result.video-record']);
    const failure = failureOf(report, 'files.result.video-record');
    expect(failure.message).toMatch(/^output\.files\[0\]\.url gives the \d+ bytes its size states$/);
    expect(failure.request?.path).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/\w+/);
    expect(failure.expected).toBe(Number(failure.actual) + 1);
  });
});

describe('input', () => {
  it('fails tasks.input.numeric-string when a numeric string is kept as a string', async () => {
    const ONLY = ['tasks.input.numeric-string', 'tasks.submit.queued'];
    const p = await deviate({
      answer(answer, req) {
        if (!is(req, 'POST', /^\/v1\/tasks$/) || answer.status !== 200) return undefined;
        const sent = (JSON.parse(req.body) as { input?: Json }).input ?? {};
        if (typeof sent['page'] !== 'string') return undefined;
        return editJson(answer, (body) => void (inputOf(body)['page'] = sent['page']));
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/tasks$/);
    expectFailedExactly(report, ONLY, ['tasks.input.numeric-string']);
    expectFailure(p, report, 'tasks.input.numeric-string', { message: 'input.page sent as "3" is the number 3', method: 'POST', path: '/v1/tasks', expected: 3, actual: '3' });
  });

  it('fails tasks.input.numeric-duration when a numeric string is refused as a parameter error', async () => {
    const ONLY = ['tasks.input.numeric-duration', 'billing.freeze.video-480p-4s'];
    const p = await deviate({
      answer(answer, req) {
        if (!is(req, 'POST', /^\/v1\/tasks$/) || typeof ((JSON.parse(req.body) as { input?: Json }).input ?? {})['duration'] !== 'string') return undefined;
        const requestId = answer.headers['x-request-id'] ?? '';
        const error = { code: 'invalid_params', message: 'Invalid parameters.', request_id: requestId, details: [{ field: 'input.duration', message: 'must be integer' }] };
        return { ...answer, status: 422, body: JSON.stringify({ error }) };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/tasks$/);
    expectFailedExactly(report, ONLY, ['tasks.input.numeric-duration']);
    expectFailure(p, report, 'tasks.input.numeric-duration', { message: 'POST /v1/tasks answered 422 invalid_params (Invalid parameters.), not 200', method: 'POST', path: '/v1/tasks', expected: 200, actual: 422 });
  });

  it('fails tasks.input.params-alias when params is ignored', async () => {
    const ONLY = ['tasks.input.params-alias', 'tasks.submit.queued'];
    const p = await deviate({
      request(req) {
        if (!is(req, 'POST', /^\/v1\/tasks$/) || !req.body.includes('"params"')) return undefined;
        const sent = JSON.parse(req.body) as Json;
        delete sent['params'];
        return { ...req, body: JSON.stringify(sent) };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/tasks$/);
    expectFailedExactly(report, ONLY, ['tasks.input.params-alias']);
    expectFailure(p, report, 'tasks.input.params-alias', { message: /^POST \/v1\/tasks answered 422 invalid_params .*, not 200$/, method: 'POST', path: '/v1/tasks', expected: 200, actual: 422 });
  });

  it('fails tasks.input.params-alias and the replay rule when the same parameters as input conflict with params under one key', async () => {
    const ONLY = ['tasks.input.params-alias', 'tasks.idempotency.*'];
    const withParams = new Set<string>();
    const p = await deviate({
      answer(answer, req) {
        if (!is(req, 'POST', /^\/v1\/tasks$/) || answer.status !== 200) return undefined;
        const key = req.headers['idempotency-key'] ?? '';
        if (req.body.includes('"params"')) withParams.add(key);
        if (!withParams.has(key) || req.body.includes('"params"')) return undefined;
        const error = { code: 'idempotency_conflict', message: 'Idempotency-Key reused with other parameters.', request_id: answer.headers['x-request-id'] ?? '' };
        return { ...answer, status: 409, headers: { ...answer.headers, 'idempotent-replayed': 'false' }, body: JSON.stringify({ error }) };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/tasks$/);
    // The idempotency checks the suite had pass: they never send params.
    expectFailedExactly(report, ONLY, ['tasks.input.params-alias', 'tasks.idempotency.same-answer']);
    expectFailure(p, report, 'tasks.input.params-alias', {
      message: 'POST /v1/tasks answered 409 idempotency_conflict (Idempotency-Key reused with other parameters.), not 200',
      method: 'POST',
      path: '/v1/tasks',
      expected: 200,
      actual: 409,
    });
    expectRuleFailed(report, 'tasks.idempotency.same-answer', /was answered 409 idempotency_conflict/);
  });
});

describe('uploads', () => {
  // The upload check the suite had (ids, addresses, the bytes back) passes beside the new ones.
  const ONLY = ['files.upload.*', 'exercise.files.upload-download'];
  const editUploads = (edit: (record: Json, req: Forwarded) => void): Deviation => ({
    answer(answer, req) {
      if (!is(req, 'POST', /^\/v1\/files$/) || answer.status !== 200) return undefined;
      return editJson(answer, (record) => edit(record, req));
    },
  });

  it('fails files.upload.type-kept when an upload is recorded as application/octet-stream', async () => {
    const p: Proxy = await deviate(
      editUploads((record) => {
        record['mime_type'] = 'application/octet-stream';
        record['type'] = 'file';
      }),
    );
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/files$/);
    expectFailedExactly(report, ONLY, ['files.upload.type-kept']);
    expectFailure(p, report, 'files.upload.type-kept', { message: 'mime_type is the type sent (image/svg+xml)', method: 'POST', path: '/v1/files', expected: 'image/svg+xml', actual: 'application/octet-stream' });
  });

  it('fails files.upload.size-decoded when a multipart size counts characters, not bytes', async () => {
    const p = await deviate(
      editUploads((record, req) => {
        // The part's content between its headers and the closing boundary, counted in UTF-16 code units.
        const content = /\r\n\r\n([\s\S]*)\r\n--[^\r\n]+--\r\n$/.exec(req.body)?.[1];
        if (content !== undefined) record['size'] = content.length;
      }),
    );
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/files$/);
    // The earlier check uploads ASCII text, whose characters are its bytes.
    expectFailedExactly(report, ONLY, ['files.upload.size-decoded']);
    const failure = expectFailure(p, report, 'files.upload.size-decoded', { message: /^size is the decoded byte count \(\d+ UTF-8 bytes, \d+ characters\)$/, method: 'POST', path: '/v1/files' });
    const [bytes, characters] = (/\((\d+) UTF-8 bytes, (\d+) characters\)/.exec(failure.message) ?? []).slice(1).map(Number);
    expect([failure.expected, failure.actual]).toEqual([bytes, characters]);
    expect(bytes).toBeGreaterThan(characters ?? Infinity);
  });
});
