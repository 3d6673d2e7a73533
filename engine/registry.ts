import { SwissStandardRenderer, type DialectRenderer } from './dialect/dialect-renderer.js';
import { EspeakPool } from './espeak/espeak-pool.js';
import { EspeakTtsEngine } from './espeak/espeak-tts.js';
import { espeakLanguageVoices, ESPEAK_VOICE_STYLES } from './espeak/espeak-voices.js';
import { SyntheticSttEngine } from './synthetic/synthetic-stt.js';
import { SyntheticTtsEngine } from './synthetic/synthetic-tts.js';
import type { BatchSttEngine, TtsEngine } from './types.js';

/** Live synthesis engines the registry can build. */
export type TtsEngineChoice = 'espeak' | 'none';

/** What the registry needs to know to build engines. */
export interface EngineRegistryOptions {
  /** Language codes of the catalog. */
  readonly languages: readonly string[];
  /** Duration model of the sandbox engine. */
  readonly sandboxCharactersPerSecond: number;
  /** The live synthesis engine; `none` leaves live synthesis unavailable. */
  readonly ttsEngine: TtsEngineChoice;
  /** Worker threads of the eSpeak pool. */
  readonly ttsWorkers: number;
}

/**
 * The engines of one process, by role. A live engine is `null` when none is configured; the
 * service then answers `*.unavailable` rather than pretend.
 */
export interface EngineRegistry {
  readonly sandbox: { readonly tts: TtsEngine; readonly stt: BatchSttEngine };
  readonly live: { readonly tts: TtsEngine | null; readonly stt: BatchSttEngine | null };
  /** Renders Standard German into the requested `de-CH` dialect before synthesis. */
  readonly dialect: DialectRenderer;
  /** Stops worker threads; the registry's owner calls it last. */
  close(): Promise<void>;
}

/** Builds and warms the engines of this deployment. */
export async function createEngineRegistry(options: EngineRegistryOptions): Promise<EngineRegistry> {
  let pool: EspeakPool | null = null;
  if (options.ttsEngine === 'espeak') {
    pool = await EspeakPool.start(options.ttsWorkers);
    // The first synthesis per voice loads its dictionary (50–300 ms): do it now, not on a call.
    const variants = Object.values(ESPEAK_VOICE_STYLES).map((style) => style.variant);
    await pool.warm(espeakLanguageVoices().flatMap((voice) => variants.map((variant) => `${voice}+${variant}`)));
  }
  return {
    sandbox: {
      tts: new SyntheticTtsEngine({ charactersPerSecond: options.sandboxCharactersPerSecond, languages: options.languages }),
      stt: new SyntheticSttEngine(options.languages),
    },
    live: { tts: pool ? new EspeakTtsEngine(pool) : null, stt: null },
    dialect: new SwissStandardRenderer(),
    async close() {
      await pool?.close();
    },
  };
}
