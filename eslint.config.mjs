// Lint: typescript-eslint's recommended rules, plus the layer rules the README draws (the
// same ones test/unit/architecture.test.ts checks on every test run).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const frontEndImports = {
  patterns: [
    {
      group: ['../*', '!../core', '!../errors', '!../config', '!../log'],
      message: 'front ends reach the domain through the core (src/core.ts), errors, config and log only',
    },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tap/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        __dirname: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        fetch: 'readonly',
        performance: 'readonly',
        Headers: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The executable's main script and the code-cache training run (scripts/code-cache.mjs) are CommonJS.
    files: ['scripts/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __filename: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/store/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'knex', message: 'only src/store talks to the database' }] }] },
  },
  {
    files: ['src/http/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { ...frontEndImports, paths: [{ name: 'knex', message: 'only src/store talks to the database' }, 'commander'] }],
    },
  },
  {
    files: ['src/http/pages/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../*', '!../../core', '!../../errors', '!../../config', '!../../log'],
              message: 'front ends reach the domain through the core (src/core.ts), errors, config and log only',
            },
          ],
          paths: [{ name: 'knex', message: 'only src/store talks to the database' }, 'commander'],
        },
      ],
    },
  },
  {
    // The console, one folder deeper: the same rule.
    files: ['src/http/pages/admin/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../../*', '!../../../core', '!../../../errors', '!../../../config', '!../../../log'],
              message: 'front ends reach the domain through the core (src/core.ts), errors, config and log only',
            },
          ],
          paths: [{ name: 'knex', message: 'only src/store talks to the database' }, 'commander'],
        },
      ],
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { ...frontEndImports, paths: ['knex', 'koa', '@koa/router', 'koa-body'] }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/http/**', 'src/cli/**', 'src/store/**'],
    rules: { 'no-restricted-imports': ['error', { paths: ['knex', 'koa', '@koa/router', 'koa-body', 'commander'] }] },
  },
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
