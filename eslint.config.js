import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.local/**', 'scripts/mongo-server/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/workers/**'], message: 'api/ and core/ never import workers/' }] }],
    },
  },
  {
    files: ['workers/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['core/**/*.ts', 'workers/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/api/**'], message: 'core/ and workers/ never import api/' }] }] },
  },
);
