// Type-aware lint rules the house asks of every change: a promise is awaited, caught or handed to
// something that handles it; a switch over a union names every member. Formatting is Prettier's.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'src/cri/generated/**',
      'src/config/generated/**',
      'build/**',
      'node_modules/**',
      '.tmp/**',
      'test/fixtures/**',
    ],
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'dev/**/*.ts', 'bench/**/*.ts', 'soak/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true, caughtErrors: 'none' },
      ],
    },
  },
);
