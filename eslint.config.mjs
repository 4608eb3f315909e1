import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const BUILDER_MODULES = 'apps/reporting/src/builder/public/**/*.js';

export default tseslint.config(
  { ignores: ['dist/**', 'data/**', 'node_modules/**', 'coverage/**', '.stack/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.mjs', 'vitest.config.mts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      // Adapters implement async ports; an in-memory one has nothing to await.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // A switch over a union or an enum names every case: a new value fails the build, not a run.
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      eqeqeq: ['error', 'always'],
      curly: ['error', 'all'],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../*/src/*', '../../../libs/*', '../../../apps/*'],
              message: 'Import other packages through @app/* or @apps/*.',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration through the app configuration class.',
        },
      ],
    },
  },
  // The report builder's page: native ES modules served as they are, type-checked from their JSDoc by
  // tsconfig.builder.json (npm run lint), which also gives these rules their types.
  {
    files: [BUILDER_MODULES],
    languageOptions: {
      sourceType: 'module',
      parserOptions: { projectService: false, project: './tsconfig.builder.json' },
    },
    rules: {
      // tsc checks every name against the DOM library: a missing global fails the type check.
      'no-undef': 'off',
    },
  },
  // Other browser scripts served as files by the apps (API docs): plain JavaScript outside the TS project.
  {
    files: ['apps/*/src/**/public/**/*.js'],
    ignores: [BUILDER_MODULES],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['apps/*/src/**/public/**/*.js'],
    ignores: [BUILDER_MODULES],
    languageOptions: {
      sourceType: 'script',
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'fetch',
          'performance',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'URL',
          'URLSearchParams',
          'TextEncoder',
          'getComputedStyle',
          'CSS',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    files: ['apps/*/src/main.ts', 'scripts/**/*.ts', 'bench/**/*.ts', 'libs/testing/**/*.ts', 'test/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Tests poke into parsed JSON (bid requests a DSP received) without declaring its shape.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
);
