// ESLint (flat config) for every TypeScript and JavaScript file of the project: the runtime,
// the app, the tests, benchmarks, scripts and the CLI. typescript-eslint's recommended rules;
// formatting is prettier's job (npm run lint runs both).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Executables without an extension that are Node scripts (the others are bash).
const nodeScripts = readdirSync('scripts')
  .filter((f) => !f.includes('.'))
  .filter((f) => readFileSync(`scripts/${f}`, 'utf8').startsWith('#!/usr/bin/env node'))
  .map((f) => `scripts/${f}`);

// Whatever git ignores is not linted, at any depth: the app's build (web/app/dist/ after
// scripts/start), caches, bundles. Outside a git checkout only the list below applies.
function gitIgnored() {
  try {
    return execFileSync('git', ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

export default tseslint.config(
  {
    ignores: [
      ...gitIgnored(),
      'node_modules/',
      'dist/',
      'build/',
      '.cache/',
      'tests/fixtures/',
      'tests/e2e/artifacts/',
      'web/app/data/',
      'bench/results/',
      'web/examples/**/node_modules/',
      'web/examples/**/dist/',
      '**/*.d.ts',
    ],
  },
  { files: nodeScripts },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.node, ...globals.browser, ...globals.worker },
    },
    rules: {
      // Unused names are errors, except deliberately ignored ones (_name) and rest siblings.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Tests and tooling talk to untyped modules (ONNX Runtime tensors, Playwright pages).
      '@typescript-eslint/no-explicit-any': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    files: [
      'bin/**',
      'scripts/**',
      'bench/**/*.mjs',
      'model/**/*.mjs',
      'tests/**/*.mjs',
      'eslint.config.mjs',
      ...nodeScripts,
    ],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
