import js from '@eslint/js';
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
);
