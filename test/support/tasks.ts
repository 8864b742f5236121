import request from 'supertest';
import type { Response } from 'supertest';
import { expect } from 'vitest';
import type { ApiClient, TestEmulator } from './harness.ts';

/** Uploads a small file through `POST /v1/files` (JSON form, its name as its bytes); resolves with its id. */
export async function uploadFile(api: ApiClient, filename: string, mimeType: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await api.post('/v1/files', { filename, mime_type: mimeType, content: Buffer.from(filename).toString('base64'), ...extra });
  return res.body.id as string;
}

/** Submits under `scenario` (default `instant`), runs what is due now, and answers the task as it then stands. */
export async function runTask(t: TestEmulator, api: ApiClient, body: Record<string, unknown>, scenario = 'instant'): Promise<Response['body']> {
  const submitted = await api.post('/v1/tasks', body, { 'X-Emulator-Scenario': scenario });
  expect(submitted.status).toBe(200);
  await t.admin.post('/_emulator/clock/advance', { seconds: 0 });
  return (await api.get(`/v1/tasks/${submitted.body.id}`)).body;
}

/** A GET of an emulator file address on the app (it need not listen), the body read as raw bytes. */
export function downloadFile(url: string, emulator: TestEmulator): Promise<Response> {
  return request(emulator.emulator.app)
    .get(new URL(url).pathname)
    .buffer(true)
    .parse((res, callback) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => callback(null, Buffer.concat(chunks)));
    });
}
