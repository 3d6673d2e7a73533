import type { DialectRenderer } from './dialect/dialect-renderer.js';
import { SwissGermanRenderer } from './dialect/swiss-german-renderer.js';
import { EspeakPool } from './espeak/espeak-pool.js';
import { EspeakTtsEngine } from './espeak/espeak-tts.js';
import { espeakLanguageVoices, ESPEAK_VOICE_STYLES } from './espeak/espeak-voices.js';
import { SyntheticSttEngine } from './synthetic/synthetic-stt.js';
import { SyntheticTtsEngine } from './synthetic/synthetic-tts.js';
import { SherpaTtsEngine } from './sherpa/sherpa-tts.js';
import { findVoiceModels } from './sherpa/voice-models.js';

export { VoiceModelError } from './sherpa/voice-models.js';
import type { BatchSttEngine, SpeechDocument, TtsEngine } from './types.js';

/** Live synthesis engines the registry can build. */
export type TtsEngineChoice = 'espeak' | 'none';

/** What the registry needs to know to build engines. */
export interface EngineRegistryOptions {
  /** Language codes of the catalog. */
  readonly languages: readonly string[];
  /** Voice ids of the catalog. */
  readonly voices: readonly string[];
  /** Folder of neural voice models (`<voice>/<language>/model.onnx`), or `null` for none. */
  readonly voicesDir: string | null;
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
  readonly live: {
    /** The embedded engine: every `swift` request, and `studio` where no neural voice serves. */
    readonly tts: TtsEngine | null;
    /** Neural voices from the voices folder, for `studio`. */
    readonly studio: SherpaTtsEngine | null;
    readonly stt: BatchSttEngine | null;
  };
  /** The live engine for a request: a neural voice for `studio` where one speaks every passage. */
  ttsFor(model: 'studio' | 'swift', voice: string, document: SpeechDocument): TtsEngine | null;
  /** Renders Standard German into the requested `de-CH` dialect before synthesis. */
  readonly dialect: DialectRenderer;
  /** Stops worker threads; the registry's owner calls it last. */
  close(): Promise<void>;
}

/** The Swiss German dialect renderer alone (for tools that need no speech engine). */
export function createDialectRenderer(): DialectRenderer {
  return new SwissGermanRenderer();
}

/** Builds and warms the engines of this deployment. */
export async function createEngineRegistry(options: EngineRegistryOptions): Promise<EngineRegistry> {
  // Neural voices load first: a broken voices folder fails the start before threads exist.
  let studio: SherpaTtsEngine | null = null;
  if (options.voicesDir) {
    const models = await findVoiceModels(options.voicesDir, options.voices, options.languages);
    studio = await SherpaTtsEngine.load(models, 1);
  }
  let pool: EspeakPool | null = null;
  if (options.ttsEngine === 'espeak') {
    pool = await EspeakPool.start(options.ttsWorkers);
    try {
      // The first synthesis per voice loads its dictionary (50–300 ms): do it now, not on a call.
      const variants = Object.values(ESPEAK_VOICE_STYLES).map((style) => style.variant);
      await pool.warm(espeakLanguageVoices().flatMap((voice) => variants.map((variant) => `${voice}+${variant}`)));
    } catch (error) {
      await pool.close();
      throw error;
    }
  }
  const swift = pool ? new EspeakTtsEngine(pool) : null;
  return {
    sandbox: {
      tts: new SyntheticTtsEngine({ charactersPerSecond: options.sandboxCharactersPerSecond, languages: options.languages }),
      stt: new SyntheticSttEngine(options.languages),
    },
    live: { tts: swift, studio, stt: null },
    ttsFor(model, voice, document) {
      if (model === 'studio' && studio?.serves(voice, document)) return studio;
      return swift;
    },
    dialect: createDialectRenderer(),
    async close() {
      await pool?.close();
    },
  };
}
