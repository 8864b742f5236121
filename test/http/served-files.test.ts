import type { Response } from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEMO_KEY, newAccount, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { stateOf } from '../support/state.ts';
import { downloadFile, runTask } from '../support/tasks.ts';

// Any key may upload a file of any type, and /files shares its origin with the dashboard and the control API
// (issue 36): no stored file may be served as a page of that origin. Every answer of GET /files/{name} is
// sandboxed (an opaque origin, no scripts, nothing loaded but itself) with nosniff; only raster images, audio and
// video are shown inline, everything else (HTML, SVG, XHTML among them) is a download. The record keeps the type
// and size declared.

let t: TestEmulator;
beforeAll(async () => {
  t = await startEmulator();
});
afterAll(() => t.close());

const PAGE = '<script>fetch("/_emulator/clock/advance",{method:"POST"});document.title="ran"</script>';
const SVG = `<svg xmlns="http://www.w3.org/2000/svg"><script>document.title="ran"</script></svg>`;
const XHTML = `<html xmlns="http://www.w3.org/1999/xhtml"><body>${PAGE}</body></html>`;
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201ffa8e2f6ee0000000049454e44ae426082', 'hex');

const SANDBOX = /^sandbox; default-src 'none'(;|$)/;

const ACTIVE: [string, string, string][] = [
  ['HTML', 'text/html', PAGE],
  ['SVG', 'image/svg+xml', SVG],
  ['XHTML', 'application/xhtml+xml', XHTML],
];

const download = (url: string): Promise<Response> => downloadFile(url, t);

function expectSandboxed(res: Response, type: string, disposition: 'inline' | 'attachment'): void {
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe(type);
  expect(res.headers['content-disposition']).toBe(disposition);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['content-security-policy']).toMatch(SANDBOX);
  // A picture or player is loaded by its sandboxed document, of an opaque origin, in CORS mode (chromium's player).
  expect(res.headers['access-control-allow-origin']).toBe(disposition === 'inline' ? '*' : undefined);
}

const storedRecord = (url: string) => stateOf(t.emulator).files.find((f) => url.endsWith(`/files/${f.name}`));

it.each(ACTIVE)('serves an uploaded %s file (JSON and multipart) as a sandboxed download, its record keeping the declared type and size', async (_name, type, text) => {
  const bytes = Buffer.from(text);
  const json = await t.api.post('/v1/files', { filename: 'page', mime_type: type, content: bytes.toString('base64') });
  const multipart = await t.api.send((r) =>
    r
      .post('/v1/files')
      .set({ Authorization: `Bearer ${DEMO_KEY}` })
      .attach('file', bytes, { filename: 'page', contentType: type }),
  );
  for (const uploaded of [json, multipart]) {
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    expect(uploaded.body).toMatchObject({ mime_type: type, size: bytes.length, filename: 'page' });
    expect(storedRecord(uploaded.body.url as string)).toMatchObject({ mime_type: type, size: bytes.length });
    const served = await download(uploaded.body.url as string);
    expectSandboxed(served, type, 'attachment');
    expect((served.body as Buffer).equals(bytes)).toBe(true);
  }
});

it('serves other types that are no picture or player (text, JSON, a PDF) as downloads too, sandboxed', async () => {
  for (const type of ['text/plain', 'application/json', 'application/pdf', 'application/octet-stream', 'image/x-icon']) {
    const res = await t.api.post('/v1/files', { filename: 'f', mime_type: type, content: Buffer.from('{}').toString('base64') });
    expectSandboxed(await download(res.body.url as string), type, 'attachment');
  }
});

it('shows an uploaded image inline, sandboxed and not sniffed, whatever its bytes', async () => {
  const image = await t.api.post('/v1/files', { filename: 'dot.png', content: PNG.toString('base64') });
  expect(image.body).toMatchObject({ mime_type: 'image/png', type: 'image', size: PNG.length });
  expectSandboxed(await download(image.body.url as string), 'image/png', 'inline');
  // A page declared as an image is still an image to the browser, and a broken one: nosniff, the sandbox.
  const disguised = await t.api.post('/v1/files', { filename: 'x.png', mime_type: 'image/png', content: Buffer.from(PAGE).toString('base64') });
  expectSandboxed(await download(disguised.body.url as string), 'image/png', 'inline');
});

it('serves result files (the generated video and cover, and the fixtures of older records) with the same headers', async () => {
  const { key } = await newAccount(t, '1000000.000');
  const task = await runTask(t, t.as(key), { model: 'video-gen-2.0-fast', input: { prompt: 'p', ratio: '9:16', duration: 4 } });
  const [file] = task.output.files as { url: string; cover_url: string }[];
  expectSandboxed(await download(file!.url), 'video/mp4', 'inline');
  expectSandboxed(await download(file!.cover_url), 'image/jpeg', 'inline');

  // The same records made of the fixtures (as a state document of an older emulator holds them).
  const state = stateOf(t.emulator);
  const at = (url: string): number => state.files.findIndex((f) => url.endsWith(`/files/${f.name}`));
  state.files[at(file!.url)]!.source = { kind: 'fixture', fixture: 'sample.mp4' };
  state.files[at(file!.cover_url)]!.source = { kind: 'fixture', fixture: 'cover.jpg' };
  expect((await t.admin.post('/_emulator/state/import', state)).status).toBe(200);
  expectSandboxed(await download(file!.url), 'video/mp4', 'inline');
  expectSandboxed(await download(file!.cover_url), 'image/jpeg', 'inline');
});
