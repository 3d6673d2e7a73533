import type { DialectRenderer } from './dialect/dialect-renderer.js';
import { SwissGermanRenderer } from './dialect/swiss-german-renderer.js';
import { findEspeakLibrary } from './espeak/espeak-native.js';
import { EspeakPool } from './espeak/espeak-pool.js';
import { EspeakTtsEngine } from './espeak/espeak-tts.js';
import { espeakLanguageVoices, ESPEAK_VOICE_STYLES } from './espeak/espeak-voices.js';
import { SyntheticSttEngine } from './synthetic/synthetic-stt.js';
import { SyntheticTtsEngine } from './synthetic/synthetic-tts.js';
import { SherpaTtsEngine } from './sherpa/sherpa-tts.js';
import { findPocketsphinx, PocketsphinxEngine } from './pocketsphinx/pocketsphinx-engine.js';
import { findVoiceModels } from './sherpa/voice-models.js';
import { BatchUtteranceDecoder } from './stt/batch-decoder.js';
import { EndpointedSttEngine } from './stt/endpointed-engine.js';
import { loadWebRtcVad, VAD_SAMPLE_RATES_HZ } from './vad/webrtc-vad.js';
import { startInstalledModels, type InstalledEngines } from './models/installed-engines.js';
import type { LanguageIdentifier } from './sherpa/language-id.js';

export { VoiceModelError } from './sherpa/voice-models.js';
export { InstalledModelError } from './models/installed-engines.js';
import type { BatchSttEngine, EngineLoad, SpeechDocument, SttEngine, TtsEngine } from './types.js';

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
  /** libespeak-ng's file when not in a usual library directory (`SPRACHROHR_ESPEAK_LIBRARY`). */
  readonly espeakLibrary?: string;
  /** The live recognition engine; `pocketsphinx` is used when Debian's packages are installed. */
  readonly sttEngine: 'pocketsphinx' | 'none';
  /** Worker threads of the embedded recogniser and of each installed model. */
  readonly sttWorkers: number;
  readonly pocketsphinxModelDir: string;
  /** Folder of installed recognition models (`sprachrohr models`), or `null` for none. */
  readonly modelsDir: string | null;
}

/** The live recognisers of a deployment, by language. */
export interface LiveRecognisers {
  /** Every running engine. */
  readonly engines: readonly SttEngine[];
  /** The engine for a language code, or `null` when none is installed for it. */
  engineFor(language: string): SttEngine | null;
  /** Language codes some engine recognises. */
  readonly languages: readonly string[];
  /** Why an engine the configuration asks for is not running (shown in logs), if one is not. */
  readonly unavailable: readonly string[];
  /** Names the spoken language among several candidates, when a model for it is installed. */
  readonly languageId: LanguageIdentifier | null;
  /** `silero` when an installed Silero model finds speech at 16 kHz; `webrtc` otherwise. */
  readonly voiceActivity: 'silero' | 'webrtc';
}

/**
 * The engines of one process, by role. A live engine is `null` when none is configured; the
 * service then answers `*.unavailable` rather than pretend.
 */
export interface EngineRegistry {
  readonly sandbox: {
    readonly tts: TtsEngine;
    readonly stt: BatchSttEngine;
    /** The sandbox recogniser as a stream (batch-to-streaming over voice activity detection). */
    readonly sttStream: SttEngine;
  };
  readonly live: {
    /** The embedded engine: every `swift` request, and `studio` where no neural voice serves. */
    readonly tts: TtsEngine | null;
    /** Neural voices from the voices folder, for `studio`. */
    readonly studio: SherpaTtsEngine | null;
    readonly stt: LiveRecognisers;
  };
  /** The live engine for a request: a neural voice for `studio` where one speaks every passage. */
  ttsFor(model: 'studio' | 'swift', voice: string, document: SpeechDocument): TtsEngine | null;
  /** Renders Standard German into the requested `de-CH` dialect before synthesis. */
  readonly dialect: DialectRenderer;
  /** How occupied each live engine with a worker pool is, by engine id. */
  load(): Array<EngineLoad & { readonly engine: string }>;
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
    pool = await EspeakPool.start(options.ttsWorkers, findEspeakLibrary(options.espeakLibrary));
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
  let recognisers: LiveRecognisers & { close(): Promise<void> };
  try {
    recognisers = await startRecognisers(options);
  } catch (error) {
    await pool?.close();
    throw error;
  }
  await loadWebRtcVad();
  const sandboxStt = new SyntheticSttEngine(options.languages);
  return {
    sandbox: {
      tts: new SyntheticTtsEngine({ charactersPerSecond: options.sandboxCharactersPerSecond, languages: options.languages }),
      stt: sandboxStt,
      sttStream: new EndpointedSttEngine(
        'synthetic',
        { languages: options.languages, sampleRatesHz: [...VAD_SAMPLE_RATES_HZ], partials: true, vocabulary: 'none' },
        (streamOptions) => new BatchUtteranceDecoder(sandboxStt, streamOptions, (language, seconds) => sandboxStt.partial(language, seconds)),
      ),
    },
    live: { tts: swift, studio, stt: recognisers },
    ttsFor(model, voice, document) {
      if (model === 'studio' && studio?.serves(voice, document)) return studio;
      return swift;
    },
    dialect: createDialectRenderer(),
    load() {
      const engines: Array<TtsEngine | SttEngine> = [...(swift ? [swift] : []), ...(studio ? [studio] : []), ...recognisers.engines];
      return engines.flatMap((engine) => (engine.load ? [{ engine: engine.id, ...engine.load() }] : []));
    },
    async close() {
      await pool?.close();
      await recognisers.close();
    },
  };
}

/** English codes of the catalog: the US English model serves them all. */
const ENGLISH = /^en(-|$)/;

/**
 * Starts the live recognisers the options name and the machine has. Installed models come
 * first: an operator who installs a model for a language wants it over the embedded one.
 */
async function startRecognisers(options: EngineRegistryOptions): Promise<LiveRecognisers & { close(): Promise<void> }> {
  const engines: SttEngine[] = [];
  const closers: Array<() => Promise<void>> = [];
  const unavailable: string[] = [];
  let installed: InstalledEngines | null = null;
  try {
    if (options.modelsDir) {
      installed = await startInstalledModels(options.modelsDir, options.languages, options.sttWorkers);
      engines.push(...installed.recognisers);
      closers.push(installed.close);
    }
    if (options.sttEngine === 'pocketsphinx') {
      const found = await findPocketsphinx(options.pocketsphinxModelDir);
      if (found.available) {
        const languages = options.languages.filter((code) => ENGLISH.test(code));
        const detectorFor = installed?.detectorFor ?? undefined;
        const pocketsphinx = await PocketsphinxEngine.start({
          modelDir: found.modelDir,
          languages,
          workers: options.sttWorkers,
          ...(detectorFor ? { detectorFor } : {}),
        });
        engines.push(pocketsphinx);
        closers.push(() => pocketsphinx.close());
      } else {
        unavailable.push(`pocketsphinx: ${found.reason}`);
      }
    }
  } catch (error) {
    await Promise.all(closers.map((close) => close()));
    throw error;
  }
  const byLanguage = new Map<string, SttEngine>();
  for (const engine of engines) for (const language of engine.capabilities.languages) if (!byLanguage.has(language)) byLanguage.set(language, engine);
  return {
    engines,
    engineFor: (language) => byLanguage.get(language) ?? null,
    languages: [...byLanguage.keys()],
    unavailable,
    languageId: installed?.languageId ?? null,
    voiceActivity: installed?.detectorFor ? 'silero' : 'webrtc',
    close: async () => {
      await Promise.all(closers.map((close) => close()));
    },
  };
}
