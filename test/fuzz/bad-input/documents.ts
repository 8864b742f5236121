import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ADMIN_TOKEN, DEMO_KEY } from '../../support/harness.ts';
import type { DocumentName } from '../../support/spec-check.ts';
import { RawJson } from './raw-json.ts';

// The documents, read the way the emulator reads them, and the names the cases aim at.

export type Schema = Record<string, unknown>;
export const DOCS: Record<DocumentName, Schema> = {
  service: parse(readFileSync(new URL('../../../openapi/service.yaml', import.meta.url), 'utf8')) as Schema,
  admin: parse(readFileSync(new URL('../../../openapi/admin.yaml', import.meta.url), 'utf8')) as Schema,
};
export const PUBLIC_URL = 'http://127.0.0.1:4010';
export const TEXT_MODELS = ['svc-text-pro', 'svc-text-lite'];
export const TASK_MODELS = ['social-notes-data', 'video-gen-2.0-fast', 'avatar-photo'];
export const V1 = { Authorization: `Bearer ${DEMO_KEY}` };
export const ADMIN = { Authorization: `Bearer ${ADMIN_TOKEN}` };

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RawJson);

export function pointer(doc: DocumentName, ref: string): { doc: DocumentName; node: unknown } {
  const [file, path = ''] = ref.split('#');
  const target: DocumentName = !file ? doc : file.includes('service') ? 'service' : 'admin';
  const node = path
    .split('/')
    .slice(1)
    .reduce<unknown>((n, part) => (isObject(n) ? n[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), DOCS[target]);
  return { doc: target, node };
}

export function deref(doc: DocumentName, schema: Schema): { doc: DocumentName; schema: Schema } {
  let current = { doc, schema };
  for (let i = 0; i < 10 && typeof current.schema['$ref'] === 'string'; i++) {
    const { doc: d, node } = pointer(current.doc, current.schema['$ref']);
    current = { doc: d, schema: isObject(node) ? node : {} };
  }
  return current;
}

export const component = (doc: DocumentName, name: string): Schema => ({ $ref: `${doc}.yaml#/components/schemas/${name}` });
