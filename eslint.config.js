import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const forbid = (folder, message) => ({ group: [`**/${folder}/**`], message });
const NO_SLEEP =
  'No fixed sleeps in tests: wait on the state the test needs (eventually, queueSettled, jobEnded in test/support/), or inject a clock.';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', '.local/**', 'scripts/mongo-server/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['examples/**/*.js'], languageOptions: { globals: globals.browser } },
  // Server-side examples an enterprise backend copies: Node's globals (fetch, Buffer, setTimeout).
  { files: ['examples/**/*.mjs'], languageOptions: { globals: globals.node } },
  // No fixed sleeps in tests: they wait on the state they need (eventually, queueSettled, jobEnded
  // ...). A wait on time that cannot be avoided is a named helper in test/support/ saying why.
  {
    files: ['test/**/*.ts', 'sdk/test/**/*.ts'],
    ignores: ['test/support/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          // setTimeout(resolve, ms)
          "CallExpression[callee.name='setTimeout'][arguments.0.type='Identifier']",
          // setTimeout(() => resolve(), ms)
          "CallExpression[callee.name='setTimeout'] > ArrowFunctionExpression.arguments[body.type='CallExpression'][body.callee.type='Identifier']",
        ].map((selector) => ({ selector, message: NO_SLEEP })),
      ],
      'no-restricted-imports': [
        'error',
        { paths: ['timers/promises', 'node:timers/promises'].map((name) => ({ name, importNames: ['setTimeout'], message: NO_SLEEP })) },
      ],
    },
  },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
  // Entry folders are separate processes and core/ is shared by both: each override lists every
  // folder it forbids, because a later `no-restricted-imports` replaces an earlier one instead of
  // adding to it. The same rules, plus cycles and core/ layering, are checked by dependency-cruiser.
  {
    files: ['api/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [forbid('workers', 'api/ never imports workers/')] }] },
  },
  {
    files: ['workers/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [forbid('api', 'workers/ never imports api/')] }] },
  },
  {
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['api', 'workers', 'scripts', 'test', 'bench'].map((folder) => forbid(folder, 'core/ imports from no entry folder')) },
      ],
    },
  },
);
