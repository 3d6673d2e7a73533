import { SyntheticSttEngine } from './synthetic/synthetic-stt.js';
import { SyntheticTtsEngine } from './synthetic/synthetic-tts.js';
import type { BatchSttEngine, TtsEngine } from './types.js';

/** What the registry needs to know to build engines. */
export interface EngineRegistryOptions {
  /** Language codes of the catalog. */
  readonly languages: readonly string[];
  /** Duration model of the sandbox engine. */
  readonly sandboxCharactersPerSecond: number;
}

/**
 * The engines of one process, by role. `live` engines are `null` until a real engine is
 * configured; the service then answers `*.unavailable` rather than pretend.
 */
export interface EngineRegistry {
  readonly sandbox: { readonly tts: TtsEngine; readonly stt: BatchSttEngine };
  readonly live: { readonly tts: TtsEngine | null; readonly stt: BatchSttEngine | null };
}

/** Builds the engines of this deployment. */
export function createEngineRegistry(options: EngineRegistryOptions): EngineRegistry {
  return {
    sandbox: {
      tts: new SyntheticTtsEngine({ charactersPerSecond: options.sandboxCharactersPerSecond, languages: options.languages }),
      stt: new SyntheticSttEngine(options.languages),
    },
    live: { tts: null, stt: null },
  };
}
