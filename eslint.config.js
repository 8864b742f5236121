import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import ts from 'typescript';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), 'src');

/** The file a relative specifier names (our imports spell `.ts`; a folder means its index.ts), or null. */
function resolveImport(fromFile, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(fromFile), specifier);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** Every relative module a source text names: imports and re-exports, type-only and dynamic ones included. */
function importedFiles(file, text) {
  const { importedFiles: found } = ts.preProcessFile(text, true, true);
  return found.map(({ fileName }) => resolveImport(file, fileName)).filter((target) => target !== null);
}

// Parsed once per file version: one lint run reads each module's imports once, however many files reach it.
const importsCache = new Map();
function importsOf(file) {
  const { mtimeMs } = statSync(file);
  const cached = importsCache.get(file);
  if (cached?.mtimeMs === mtimeMs) return cached.imports;
  const imports = importedFiles(file, readFileSync(file, 'utf8'));
  importsCache.set(file, { mtimeMs, imports });
  return imports;
}

/** A path of imports from `start` back to `goal` (both included), or null; `seen` is shared by one file's imports. */
function pathBack(start, goal, seen) {
  const trail = [];
  const walk = (file) => {
    if (file === goal) return true;
    if (seen.has(file)) return false;
    seen.add(file);
    trail.push(file);
    for (const next of importsOf(file)) if (walk(next)) return true;
    trail.pop();
    return false;
  };
  return walk(start) ? [...trail, goal] : null;
}

const shown = (file) => path.relative(path.dirname(SRC), file);

/** The folder of src/ a file belongs to (`tasks` for src/tasks/records.ts), or null for a file at src/'s top. */
function folderOf(file) {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : null;
}

/** Visits each import, re-export and dynamic import that names a module by a string. */
function eachImport(check) {
  const visit = (node) => {
    const source = node.source;
    if (source?.type === 'Literal' && typeof source.value === 'string') check(node, source.value);
  };
  return {
    ImportDeclaration: visit,
    ExportNamedDeclaration: visit,
    ExportAllDeclaration: visit,
    ImportExpression: visit,
  };
}

/**
 * Local rules. import/no-cycle skips `import type` by design (erased at run time), but a type-level cycle ties
 * modules together all the same: these follow every import, type-only ones included.
 */
const local = {
  rules: {
    'no-cycle': {
      meta: { type: 'problem', messages: { cycle: 'Import cycle (type-only imports count): {{trail}}.' }, schema: [] },
      create(context) {
        const file = context.filename;
        const seen = new Set();
        return eachImport((node, specifier) => {
          const target = resolveImport(file, specifier);
          if (!target) return;
          const trail = pathBack(target, file, seen);
          if (trail) context.report({ node, messageId: 'cycle', data: { trail: [file, ...trail].map(shown).join(' → ') } });
        });
      },
    },
    'index-only': {
      meta: {
        type: 'problem',
        messages: { internal: "Import '{{specifier}}' through src/{{folder}}/index.ts: another folder's files are its own." },
        schema: [],
      },
      create(context) {
        const file = context.filename;
        const own = folderOf(file);
        return eachImport((node, specifier) => {
          const target = resolveImport(file, specifier) ?? (specifier.startsWith('.') ? path.resolve(path.dirname(file), specifier) : null);
          if (!target) return;
          const folder = folderOf(target);
          if (folder === null || folder === own) return;
          if (target !== path.join(SRC, folder, 'index.ts')) context.report({ node, messageId: 'internal', data: { specifier, folder } });
        });
      },
    },
  },
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Read time from the clock module (src/clock).' },
      ],
    },
  },
  {
    // Clients run on their own wall clock: the request-signing helper and the conformance suite.
    files: ['src/clock/**', 'src/keys/sign-request.ts', 'src/conformance/**', 'test/**', 'bench/**', 'scripts/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Dependencies point one way: no import cycles in the source, type-only imports included (the wire code the
    // suite, proxy, recording and parity share lives in src/wire, a leaf). A folder's index.ts is the only file other
    // folders import: what else it holds can change without them. What the client side shares with the server sits
    // in small folders of its own (src/text-formats, src/address-guard, src/defaults), so that a client entry point
    // loads no server folder whole to reach one file of it.
    files: ['src/**/*.ts'],
    plugins: { local },
    rules: { 'local/no-cycle': 'error', 'local/index-only': 'error' },
  },
);
