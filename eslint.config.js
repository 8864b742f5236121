import js from '@eslint/js';
import importPlugin from 'eslint-plugin-import';
import tseslint from 'typescript-eslint';

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
    // No import cycles in the source: a module depends on what is below it and never back (the wire code the suite,
    // proxy, recording and parity share lives in src/wire, a leaf). The rule does not follow `import type` (erased at
    // run time); the settings let its resolver and parser read our `.ts` imports.
    files: ['src/**/*.ts'],
    plugins: { import: importPlugin },
    settings: {
      'import/extensions': ['.ts'],
      'import/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import/resolver': { node: { extensions: ['.ts'] } },
    },
    rules: { 'import/no-cycle': ['error', { maxDepth: Infinity, ignoreExternal: true }] },
  },
);
