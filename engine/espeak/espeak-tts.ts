import type { Passage, SpeechDocument, SpeechItem, TtsEngine, TtsEvent, TtsOptions } from '../types.js';
import type { EspeakPool } from './espeak-pool.js';
import { ESPEAK_VOICE_STYLES, espeakLanguages, espeakLanguageVoice } from './espeak-voices.js';

/** eSpeak NG renders at this rate. */
export const ESPEAK_SAMPLE_RATE_HZ = 22050;
/** eSpeak's accepted speaking rates, words per minute. */
const MIN_WPM = 80;
const MAX_WPM = 450;

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function unescapeXml(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
}

/** One stretch between breaks as the SSML eSpeak reads, and where each mark sits in it. */
export function itemsToSsml(items: readonly SpeechItem[]): { ssml: string; marks: Array<{ name: string; position: number }> } {
  let ssml = '<speak>';
  const marks: Array<{ name: string; position: number }> = [];
  for (const item of items) {
    if (item.type === 'text') ssml += escapeXml(item.text);
    else if (item.type === 'mark') {
      // eSpeak counts text positions from 1.
      marks.push({ name: item.name, position: ssml.length + 1 });
      ssml += `<mark name="${escapeXml(item.name)}"/>`;
    }
  }
  return { ssml: `${ssml}</speak>`, marks };
}

/**
 * Splits a passage at its breaks. eSpeak's own breaks come out shorter than asked (800 ms gave
 * 730 ms here), so breaks are rendered by this engine as exact silence between eSpeak jobs.
 */
function segmentsOf(passage: Passage): Array<{ kind: 'speech'; items: SpeechItem[] } | { kind: 'break'; milliseconds: number }> {
  const segments: Array<{ kind: 'speech'; items: SpeechItem[] } | { kind: 'break'; milliseconds: number }> = [];
  for (const item of passage.items) {
    if (item.type === 'break') {
      segments.push({ kind: 'break', milliseconds: item.milliseconds });
      continue;
    }
    const last = segments[segments.length - 1];
    if (last?.kind === 'speech') last.items.push(item);
    else segments.push({ kind: 'speech', items: [item] });
  }
  return segments;
}

/**
 * The embedded synthesis engine: eSpeak NG (WebAssembly) in a pool of worker threads. Each
 * passage is one eSpeak job in the passage's language voice and the named voice's variant,
 * pitch and rate; audio streams back about every 100 ms of speech.
 */
export class EspeakTtsEngine implements TtsEngine {
  readonly id = 'espeak-ng';
  readonly capabilities = { languages: espeakLanguages(), streaming: true, sampleRateHz: ESPEAK_SAMPLE_RATE_HZ };

  constructor(private readonly pool: EspeakPool) {}

  async *synthesize(document: SpeechDocument, options: TtsOptions, signal: AbortSignal): AsyncIterable<TtsEvent> {
    const style = ESPEAK_VOICE_STYLES[options.voice];
    if (!style) throw new RangeError(`eSpeak has no style for voice ${options.voice}`);
    const wordsPerMinute = Math.round(Math.min(MAX_WPM, Math.max(MIN_WPM, style.wordsPerMinute * options.speed)));
    let produced = 0;
    for (const passage of document.passages) {
      const languageVoice = espeakLanguageVoice(passage.language, passage.dialect);
      if (!languageVoice) throw new RangeError(`eSpeak has no voice for ${passage.language}`);
      const voice = `${languageVoice}+${style.variant}`;
      for (const segment of segmentsOf(passage)) {
        signal.throwIfAborted();
        if (segment.kind === 'break') {
          const pcm = new Int16Array(Math.round((segment.milliseconds / 1000) * ESPEAK_SAMPLE_RATE_HZ));
          produced += pcm.length;
          yield { type: 'audio', pcm, sampleRateHz: ESPEAK_SAMPLE_RATE_HZ };
          continue;
        }
        const marksOnly = segment.items.every((item) => item.type === 'mark');
        if (marksOnly) {
          // Nothing to say: the marks sit exactly here.
          for (const item of segment.items) if (item.type === 'mark') yield { type: 'mark', name: item.name, offsetSeconds: produced / ESPEAK_SAMPLE_RATE_HZ };
          continue;
        }
        const { ssml, marks } = itemsToSsml(segment.items);
        // eSpeak drops a mark that follows a sentence end; such a mark is placed at the start
        // of the next word instead (or at the end of the stretch), never lost.
        const pending = [...marks];
        const start = produced;
        const job = { ssml, voice, wordsPerMinute, pitch: style.pitch, range: style.range };
        for await (const message of this.pool.synthesize(job, signal)) {
          // Chunks the worker made before it saw the abort are dropped, not delivered.
          signal.throwIfAborted();
          if (message.type === 'done') break;
          for (const event of message.events) {
            const offsetSeconds = start / ESPEAK_SAMPLE_RATE_HZ + event.audioPositionMs / 1000;
            if (event.type === 'word') {
              while (pending.length > 0 && pending[0]!.position < event.textPosition) {
                yield { type: 'mark', name: pending.shift()!.name, offsetSeconds };
              }
              const text = unescapeXml(ssml.slice(event.textPosition - 1, event.textPosition - 1 + event.length));
              yield { type: 'word', text, offsetSeconds };
            } else if (event.type === 'mark' && pending[0] !== undefined && pending[0].name === event.name) {
              yield { type: 'mark', name: pending.shift()!.name, offsetSeconds };
            }
          }
          if (message.pcm.length > 0) {
            produced += message.pcm.length;
            yield { type: 'audio', pcm: message.pcm, sampleRateHz: ESPEAK_SAMPLE_RATE_HZ };
          }
        }
        for (const mark of pending) yield { type: 'mark', name: mark.name, offsetSeconds: produced / ESPEAK_SAMPLE_RATE_HZ };
        signal.throwIfAborted();
      }
    }
    yield { type: 'end', durationSeconds: produced / ESPEAK_SAMPLE_RATE_HZ };
  }
}
