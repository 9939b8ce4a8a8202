// ESLint for the JavaScript that checks the package: tests, harness, benchmarks and build scripts.
// `n8n-node lint` (eslint.config.mjs, which its strict mode requires to stay n8n's own) reads only
// the TypeScript of the nodes and credentials, so this second config covers everything else.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';

export default defineConfig(
	globalIgnores(['dist/', 'coverage/', '.n8n-e2e/', 'bench-results/', 'test-output/', '**/*.ts']),
	{
		files: ['**/*.{js,mjs,cjs}'],
		extends: [js.configs.recommended],
		linterOptions: { reportUnusedDisableDirectives: 'error' },
		languageOptions: { ecmaVersion: 2023, globals: globals.node },
		rules: {
			// A caught error that is deliberately ignored is common in clean-up paths.
			'no-unused-vars': ['error', { caughtErrors: 'none', ignoreRestSiblings: true }],
			eqeqeq: ['error', 'always', { null: 'ignore' }],
			'no-var': 'error',
			'prefer-const': 'error',
			'no-shadow': 'error',
			'object-shorthand': 'error',
		},
	},
	{ files: ['**/*.js', '**/*.cjs'], languageOptions: { sourceType: 'commonjs' } },
	{
		// Their page.evaluate callbacks run in Chromium, not in Node.js.
		files: ['test/support/planner.js', 'test/integration/planner.test.js', 'test/ui/**/*.mjs'],
		languageOptions: { globals: { ...globals.node, ...globals.browser } },
	},
);
