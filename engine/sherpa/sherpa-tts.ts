import { readFile } from 'node:fs/promises';
import sherpa, { type OfflineTts } from 'sherpa-onnx-node';
import { AsyncQueue } from '../async-queue.js';
import { applyGain, deliveryGainDb, deliveryRate, sameProsody } from '../delivery.js';
import type { Passage, Prosody, SpeechDocument, TtsEngine, TtsEvent, TtsOptions } from '../types.js';
import { readOnnxMetadata, REQUIRED_VITS_METADATA } from './onnx-metadata.js';
import { VoiceModelError, type VoiceModelFiles } from './voice-models.js';

/** A loaded neural voice. */
interface LoadedVoice {
  readonly files: VoiceModelFiles;
  readonly tts: OfflineTts;
}

/** A stretch of a passage rendered in one call, or an exact silence, or a named point. */
type Segment =
  | { readonly kind: 'speech'; readonly text: string; readonly prosody: Prosody | undefined }
  | { readonly kind: 'break'; readonly milliseconds: number }
  | { readonly kind: 'mark'; readonly name: string };

function segmentsOf(passage: Passage): Segment[] {
  const segments: Segment[] = [];
  for (const item of passage.items) {
    if (item.type === 'break') segments.push({ kind: 'break', milliseconds: item.milliseconds });
    else if (item.type === 'mark') segments.push({ kind: 'mark', name: item.name });
    else {
      const last = segments[segments.length - 1];
      if (last?.kind === 'speech' && sameProsody(last.prosody, item.prosody)) segments[segments.length - 1] = { ...last, text: last.text + item.text };
      else segments.push({ kind: 'speech', text: item.text, prosody: item.prosody });
    }
  }
  return segments.filter((s) => s.kind !== 'speech' || s.text.trim() !== '');
}

function toPcm16(samples: Float32Array, gainDb: number): Int16Array {
  const pcm = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const value = Math.round(samples[i]! * 32767);
    pcm[i] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
  }
  return applyGain(pcm, gainDb);
}

/** Refuses a model whose metadata would make sherpa-onnx end the process. */
async function checkMetadata(files: VoiceModelFiles): Promise<void> {
  let metadata: Map<string, string>;
  try {
    metadata = readOnnxMetadata(await readFile(files.model));
  } catch (error) {
    throw new VoiceModelError(`${files.folder}: model.onnx is not an ONNX model (${(error as Error).message})`);
  }
  const missing = REQUIRED_VITS_METADATA.filter((key) => !metadata.has(key));
  if (missing.length > 0) throw new VoiceModelError(`${files.folder}: model.onnx lacks the VITS metadata ${missing.join(', ')}`);
  const comment = metadata.get('comment') ?? '';
  if (/piper|coqui/i.test(comment) && !files.dataDir && !files.lexicon) {
    throw new VoiceModelError(`${files.folder}: this model phonemises with eSpeak: put its espeak-ng-data/ folder beside model.onnx`);
  }
  if (!/piper|coqui/i.test(comment) && !files.lexicon && metadata.get('frontend') !== 'characters') {
    throw new VoiceModelError(`${files.folder}: this model needs a lexicon.txt beside model.onnx`);
  }
}

/**
 * Neural voices (Piper/VITS ONNX models) through sherpa-onnx. Generation runs on
 * onnxruntime's own threads; audio streams back sentence by sentence through the progress
 * callback. VITS models give no word timings: word offsets are spread over each stretch by
 * character position; marks and breaks fall exactly between stretches. Pitch changes are not
 * available on these models; rate and level are.
 */
export class SherpaTtsEngine implements TtsEngine {
  readonly id = 'sherpa-onnx';
  readonly capabilities;

  private constructor(private readonly voices: readonly LoadedVoice[]) {
    const rates = new Set(voices.map((v) => v.tts.sampleRate));
    this.capabilities = {
      languages: [...new Set(voices.map((v) => v.files.language))],
      streaming: true,
      sampleRateHz: rates.size === 1 ? [...rates][0]! : ('any' as const),
    };
  }

  /**
   * Loads every model.
   * @throws VoiceModelError naming the folder of a model that does not load.
   */
  static async load(models: readonly VoiceModelFiles[], threads: number): Promise<SherpaTtsEngine> {
    const voices: LoadedVoice[] = [];
    for (const files of models) {
      await checkMetadata(files);
      try {
        const tts = await sherpa.OfflineTts.createAsync({
          model: {
            vits: { model: files.model, tokens: files.tokens, dataDir: files.dataDir ?? '', lexicon: files.lexicon ?? '' },
            numThreads: threads,
            debug: 0,
            provider: 'cpu',
          },
          maxNumSentences: 1,
        });
        voices.push({ files, tts });
      } catch (error) {
        throw new VoiceModelError(`${files.folder}: the model could not be loaded: ${(error as Error).message}`);
      }
    }
    return new SherpaTtsEngine(voices);
  }

  /** Installed voice and language pairs. */
  get installed(): ReadonlyArray<{ voice: string; language: string }> {
    return this.voices.map((v) => ({ voice: v.files.voice, language: v.files.language }));
  }

  private find(voice: string, language: string): LoadedVoice | undefined {
    const base = language.split('-')[0];
    return (
      this.voices.find((v) => v.files.voice === voice && v.files.language === language) ??
      this.voices.find((v) => v.files.voice === voice && v.files.language === base)
    );
  }

  /** True when a model speaks every passage of the document in this voice. */
  serves(voice: string, document: SpeechDocument): boolean {
    return document.passages.every((passage) => this.find(voice, passage.language) !== undefined);
  }

  async *synthesize(document: SpeechDocument, options: TtsOptions, signal: AbortSignal): AsyncIterable<TtsEvent> {
    // Seconds, not samples: passages may come from models with different rates.
    let elapsed = 0;
    for (const passage of document.passages) {
      const loaded = this.find(options.voice, passage.language);
      if (!loaded) throw new RangeError(`no neural model speaks ${passage.language} as ${options.voice}`);
      const rate = loaded.tts.sampleRate;
      for (const segment of segmentsOf(passage)) {
        signal.throwIfAborted();
        if (segment.kind === 'mark') {
          yield { type: 'mark', name: segment.name, offsetSeconds: elapsed };
          continue;
        }
        if (segment.kind === 'break') {
          const pcm = new Int16Array(Math.round((segment.milliseconds / 1000) * rate));
          elapsed += pcm.length / rate;
          yield { type: 'audio', pcm, sampleRateHz: rate };
          continue;
        }
        const start = elapsed;
        const chunks = new AsyncQueue<Float32Array | null>();
        const generation = loaded.tts
          .generateAsync({
            text: segment.text,
            sid: 0,
            speed: options.speed * deliveryRate(segment.prosody),
            onProgress: (info) => {
              chunks.push(info.samples.slice());
              return !signal.aborted;
            },
          })
          .then(
            () => chunks.push(null),
            (error: unknown) => {
              // A stretch with nothing the model can say (only unknown characters) is silence, not a failure.
              if (error instanceof Error && /produced no audio/.test(error.message)) chunks.push(null);
              else chunks.fail(error instanceof Error ? error : new Error(String(error)));
            },
          );
        const gainDb = deliveryGainDb(segment.prosody);
        for (let samples = await chunks.next(); samples !== null; samples = await chunks.next()) {
          signal.throwIfAborted();
          const pcm = toPcm16(samples, gainDb);
          elapsed += pcm.length / rate;
          yield { type: 'audio', pcm, sampleRateHz: rate };
        }
        await generation;
        // No timings from the model: words are placed by character position in the stretch.
        const seconds = elapsed - start;
        for (const match of segment.text.matchAll(/\S+/g)) {
          yield { type: 'word', text: match[0], offsetSeconds: start + (seconds * match.index) / Math.max(1, segment.text.length) };
        }
      }
    }
    yield { type: 'end', durationSeconds: elapsed };
  }
}
