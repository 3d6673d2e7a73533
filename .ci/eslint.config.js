// The lint rules of sprachrohr: typescript-eslint's recommended set, and the dependency rules
// of docs/architecture.md (which folders may import which), so that they stay true.
// Run: npm run lint   (the config lives here, not at the top level the design card fixes)
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/** The modules of engine/ that src/ may import: the contracts, the registry and the helpers named here. */
const ENGINE_PUBLIC = [
  './types.ts',
  './registry.ts',
  './async-queue.ts',
  './delivery.ts',
  './worker-thread.ts',
  './vad/webrtc-vad.ts',
  './stt/capacity.ts',
  './text/normaliser.ts',
  './dialect/dialect-renderer.ts',
  './dialect/deployment-lexicon.ts',
  './dialect/render-trace.ts',
  './sherpa/language-id.ts',
  './models/model-catalog.ts',
  './models/model-manifest.ts',
  './models/model-archive.ts',
  './models/model-pull.ts',
  './models/model-verify.ts',
  './models/load-probe.ts',
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'test/bench/dialect/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: ['tsconfig.json', 'test/tsconfig.json'], noWarnOnMultipleProjects: true })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            { target: './engine', from: './src', message: 'engine/ imports nothing from src/ (docs/architecture.md)' },
            {
              target: './src',
              from: './engine',
              except: ENGINE_PUBLIC,
              message: 'src/ reaches engine/ only through its public modules (docs/architecture.md)',
            },
            { target: './src/http', from: './src/realtime', message: 'the transports share src/api/, never each other (docs/architecture.md)' },
            { target: './src/realtime', from: './src/http', message: 'the transports share src/api/, never each other (docs/architecture.md)' },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  prettier,
);
