/**
 * The embedded English recogniser: Debian's pocketsphinx with its US English model, in worker
 * threads, behind WebRTC voice activity detection. A stream's audio goes to one worker in
 * 20 ms frames; partial results every 250 ms of speech; a final at each end of speech.
 */
import { access } from 'node:fs/promises';
import { PooledSttEngine } from '../stt/pooled-engine.js';
import { DecoderPool } from '../stt/worker-pool.js';
import type { FrameClassifierFactory } from '../vad/frame-classifier.js';
import { loadWebRtcVad } from '../vad/webrtc-vad.js';
import { loadPocketsphinxNative, type DecoderArguments } from './pocketsphinx-native.js';

/** Where Debian's `pocketsphinx-en-us` puts the model. */
export const DEBIAN_ENGLISH_MODEL = '/usr/share/pocketsphinx/model/en-us';

/** The model decodes 16 kHz audio; callers resample (telephone audio included). */
export const POCKETSPHINX_RATE_HZ = 16000;

/**
 * A search narrower than pocketsphinx's defaults, for a real-time factor near 0.1 (measured by
 * test/bench/stt.bench.ts). Silence frames are kept so word times match the audio (our own
 * detector has already cut the utterance).
 */
const SEARCH_TUNING: Readonly<Record<string, string | number>> = {
  '-topn': 2,
  '-maxhmmpf': 2000,
  '-maxwpf': 5,
  '-pl_window': 10,
  '-fwdflat': 'no',
  '-bestpath': 'yes',
  '-remove_silence': 'no',
};

/** Where the model's parts are, or why it cannot be used. */
export type PocketsphinxAvailability = { readonly available: true; readonly modelDir: string } | { readonly available: false; readonly reason: string };

/**
 * Checks that the libraries load and the model files exist, without loading the model. The
 * service starts either way; English recognition is offered only when this succeeds.
 */
export async function findPocketsphinx(modelDir = DEBIAN_ENGLISH_MODEL): Promise<PocketsphinxAvailability> {
  try {
    loadPocketsphinxNative();
  } catch (error) {
    return { available: false, reason: (error as Error).message };
  }
  for (const part of ['en-us/mdef', 'en-us.lm.bin', 'cmudict-en-us.dict']) {
    try {
      await access(`${modelDir}/${part}`);
    } catch {
      return { available: false, reason: `the English model is incomplete (${modelDir}/${part} is missing): apt-get install pocketsphinx-en-us` };
    }
  }
  return { available: true, modelDir };
}

/** Options of the embedded English recogniser. */
export interface PocketsphinxEngineOptions {
  readonly modelDir: string;
  /** Language codes it serves (the catalog's English codes). */
  readonly languages: readonly string[];
  /** Worker threads; each decodes its streams one frame at a time. */
  readonly workers: number;
  /**
   * Streams one worker decodes at once before new ones are refused (default 8: below what one
   * worker keeps up with in real time; each stream's decoder is large: docs/performance.md).
   */
  readonly maxStreamsPerWorker?: number;
  /** Voice activity detector per stream (default: WebRTC's). */
  readonly detectorFor?: FrameClassifierFactory;
}

/** The pocketsphinx engine: a pool of workers behind the streaming contract. */
export class PocketsphinxEngine extends PooledSttEngine {
  /** Starts the workers; each loads one decoder before this resolves. */
  static async start(options: PocketsphinxEngineOptions): Promise<PocketsphinxEngine> {
    await loadWebRtcVad();
    const m = options.modelDir;
    const decoderArguments: DecoderArguments = { '-hmm': `${m}/en-us`, '-lm': `${m}/en-us.lm.bin`, '-dict': `${m}/cmudict-en-us.dict`, ...SEARCH_TUNING };
    const pool = await DecoderPool.start({
      engineId: 'pocketsphinx',
      script: { base: import.meta.url, name: 'pocketsphinx-worker' },
      engine: decoderArguments,
      workers: options.workers,
      maxStreamsPerWorker: options.maxStreamsPerWorker ?? 8,
      idleDecoders: 4,
    });
    return new PocketsphinxEngine(
      'pocketsphinx',
      { languages: options.languages, sampleRatesHz: [POCKETSPHINX_RATE_HZ], partials: true, vocabulary: 'grammar' },
      pool,
      options.detectorFor,
    );
  }
}
