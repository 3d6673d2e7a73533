import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Tests that open no socket and start no process, engine or worker: pure functions and small
 * stateful stages. `npm run test:unit` runs them alone, in seconds; everything else is the
 * `integration` project (real sockets, engines, SIPp, baresip). `npm test` runs both.
 */
const UNIT = [
  'test/audio/g711.test.ts',
  'test/auth/**/*.test.ts',
  'test/config.test.ts',
  'test/dialplan/**/*.test.ts',
  'test/operations/{drain,operations-config}.test.ts',
  'test/realtime/audio-arrivals.test.ts',
  'test/entitlements/*.test.ts',
  'test/engine/{dialect-lexicon,dialect-renderer,dialect-scoring,endpointing,espeak-phonemes,german-syntax,normaliser,swiss-pronunciation,synthetic-tts}.test.ts',
  'test/speech/**/*.test.ts',
  'test/store/*.test.ts',
  'test/telephony/amd/*.test.ts',
  'test/telephony/cluster/compose-files.test.ts',
  'test/telephony/call/{call-negotiation,listen-*,transfer-addressing}.test.ts',
  'test/telephony/media/{audio-batch,frame-encoder,message-batch}.test.ts',
  'test/telephony/rtp/**/*.test.ts',
  'test/telephony/sdp/**/*.test.ts',
  'test/telephony/trunks/{trunk-loader,trunk-registration}.test.ts',
  'test/telephony/sip/{call-admission,digest,sip-parser}.test.ts',
];

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: UNIT } },
    ],
  },
});
