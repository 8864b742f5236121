import { expect, it } from 'vitest';
import { createAjv, loadDocument } from '../../src/contract/index.ts';
import type { DocumentName } from '../../src/contract/index.ts';

/**
 * The emulator compiles the documents' schemas lazily and without the meta-schema check (start-up time); here
 * every component schema of both documents is checked against the JSON Schema 2020-12 meta-schema and compiled,
 * so a broken schema fails a test rather than the first request that needs it.
 */
it.each(['service', 'admin'] as DocumentName[])('%s.yaml: every component schema is valid JSON Schema and compiles', (name) => {
  const doc = loadDocument(name);
  // admin.yaml's answers reference service.yaml's task schema (`./service.yaml#/…`).
  const ajv = createAjv({ service: loadDocument('service'), admin: loadDocument('admin') }, false, true);
  const names = Object.keys(doc.components?.schemas ?? {});
  expect(names.length).toBeGreaterThan(20);
  const broken: string[] = [];
  for (const schema of names) {
    try {
      if (!ajv.getSchema(`${name}.yaml#/components/schemas/${schema}`)) broken.push(`${schema}: not found`);
    } catch (err) {
      broken.push(`${schema}: ${(err as Error).message}`);
    }
  }
  expect(broken).toEqual([]);
});
