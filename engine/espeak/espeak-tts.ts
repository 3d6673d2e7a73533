import { applyGain, sameProsody } from '../delivery.js';
import type { EngineLoad, Passage, Prosody, SpeechDocument, SpeechItem, TtsEngine, TtsEvent, TtsOptions } from '../types.js';
import { espeakPhonemes } from './espeak-phonemes.js';
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

/** Text is spoken verbatim: eSpeak would read `[[…]]` as phoneme codes, so the brackets are parted. */
function speakable(text: string): string {
  return escapeXml(text.replace(/\[\[/g, '[ [').replace(/\]\]/g, '] ]'));
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

/** A stretch of a passage spoken as one eSpeak job, or an exact silence. */
type Segment = { kind: 'speech'; items: SpeechItem[]; prosody: Prosody | undefined } | { kind: 'break'; milliseconds: number };

/** A word given to eSpeak as phoneme input: where its phonemes sit in the SSML, and its text. */
export interface PhonemeWord {
  /** 1-based position of the first phoneme character (eSpeak's text positions). */
  readonly start: number;
  /** 1-based position just past the closing brackets. */
  readonly end: number;
  readonly text: string;
}

/** A stretch as the SSML eSpeak reads, where its marks sit, and the words given as phonemes. */
export interface SegmentSsml {
  readonly ssml: string;
  readonly marks: Array<{ name: string; position: number }>;
  readonly phonemeWords: readonly PhonemeWord[];
}

/**
 * One stretch as the SSML eSpeak reads, and where each mark sits in it. Rate, pitch and
 * emphasis go to eSpeak's own `<prosody>`/`<emphasis>` (measured: they change pace, melody and
 * stress); volume is applied to the samples, as eSpeak's volume barely moves the level. Words
 * with a pronunciation (Swiss German dialects) go in as eSpeak phoneme input.
 */
export function segmentToSsml(items: readonly SpeechItem[], prosody: Prosody | undefined): SegmentSsml {
  let ssml = '<speak>';
  const closing: string[] = [];
  if (prosody && (prosody.rate !== 1 || prosody.pitch !== 1)) {
    const pitchPercent = espeakPitchPercent(prosody.pitch);
    ssml += `<prosody rate="${Math.round(prosody.rate * 100)}%" pitch="${pitchPercent >= 0 ? '+' : ''}${pitchPercent}%">`;
    closing.unshift('</prosody>');
  }
  if (prosody?.emphasis) {
    ssml += `<emphasis level="${prosody.emphasis}">`;
    closing.unshift('</emphasis>');
  }
  const marks: Array<{ name: string; position: number }> = [];
  const phonemeWords: PhonemeWord[] = [];
  let afterPeriod = false;
  let markSinceText = false;
  for (const item of items) {
    if (item.type === 'text') {
      for (const span of item.pronunciation ?? [{ text: item.text, ipa: null }]) {
        const phonemes = span.ipa === null ? null : espeakPhonemes(span.ipa, prosody?.emphasis ?? null);
        if (phonemes === null) {
          ssml += speakable(span.text);
          if (span.text.trim() !== '') {
            afterPeriod = span.text.trimEnd().endsWith('.');
            markSinceText = false;
          }
        } else {
          // Measured: eSpeak drops all phoneme input after "." + <mark/> + "[[" (with "?", ",",
          // or a word in between it does not); a hyphen there is silent and keeps the input.
          if (afterPeriod && markSinceText) ssml += '-';
          const start = ssml.length + 3;
          ssml += `[[${phonemes}]]`;
          phonemeWords.push({ start, end: ssml.length + 1, text: span.text });
          afterPeriod = false;
          markSinceText = false;
        }
      }
    } else if (item.type === 'mark') {
      markSinceText = true;
      // eSpeak counts text positions from 1.
      marks.push({ name: item.name, position: ssml.length + 1 });
      ssml += `<mark name="${escapeXml(item.name)}"/>`;
    }
  }
  return { ssml: `${ssml}${closing.join('')}</speak>`, marks, phonemeWords };
}

/**
 * The written word an eSpeak word event stands for: the text of a phoneme word when the event
 * falls inside one, else the SSML text at the event; `null` for an event past the last word
 * (eSpeak reports one at the end of phoneme input without final punctuation).
 */
function wordAt(position: number, length: number, segment: SegmentSsml): string | null {
  const phonemeWord = segment.phonemeWords.find((word) => position >= word.start && position < word.end);
  if (phonemeWord) return phonemeWord.text;
  const text = unescapeXml(segment.ssml.slice(position - 1, position - 1 + length));
  return text.startsWith('<') ? null : text;
}

/**
 * eSpeak's relative pitch moves the voice's pitch setting, not its frequency: measured here,
 * +30 % raised the fundamental by 11 %, -30 % lowered it by 15 %. This inverts that, so a
 * pitch multiplier from markup or style lands close to the frequency it names.
 */
export function espeakPitchPercent(multiplier: number): number {
  const percent = (multiplier - 1) * (multiplier >= 1 ? 265 : 200);
  return Math.round(Math.min(200, Math.max(-90, percent)));
}

/**
 * Splits a passage at breaks and where the delivery changes. eSpeak's own breaks come out
 * shorter than asked (800 ms gave 730 ms here), so breaks are exact silence between jobs.
 */
function segmentsOf(passage: Passage): Segment[] {
  const segments: Segment[] = [];
  for (const item of passage.items) {
    if (item.type === 'break') {
      segments.push({ kind: 'break', milliseconds: item.milliseconds });
      continue;
    }
    const last = segments[segments.length - 1];
    const prosody = item.type === 'text' ? item.prosody : last?.kind === 'speech' ? last.prosody : undefined;
    if (last?.kind === 'speech' && (item.type === 'mark' || sameProsody(last.prosody, prosody))) last.items.push(item);
    else segments.push({ kind: 'speech', items: [item], prosody });
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

  foregroundIdleMs(): number {
    return this.pool.foregroundIdleMs();
  }

  load(): EngineLoad {
    return this.pool.load();
  }

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
        const built = segmentToSsml(segment.items, segment.prosody);
        const { ssml, marks } = built;
        const gainDb = segment.prosody ? segment.prosody.volumeDb : 0;
        // eSpeak drops a mark that follows a sentence end; such a mark is placed at the start
        // of the next word instead (or at the end of the stretch), never lost.
        const pending = [...marks];
        const start = produced;
        const job = { ssml, voice, wordsPerMinute, pitch: style.pitch, range: style.range };
        for await (const message of this.pool.synthesize(job, signal, options.neededAtMs)) {
          // Chunks the worker made before it saw the abort are dropped, not delivered.
          signal.throwIfAborted();
          if (message.type === 'done') break;
          for (const event of message.events) {
            const offsetSeconds = start / ESPEAK_SAMPLE_RATE_HZ + event.audioPositionMs / 1000;
            if (event.type === 'word') {
              while (pending.length > 0 && pending[0]!.position < event.textPosition) {
                yield { type: 'mark', name: pending.shift()!.name, offsetSeconds };
              }
              const text = wordAt(event.textPosition, event.length, built);
              if (text !== null) yield { type: 'word', text, offsetSeconds };
            } else if (event.type === 'mark' && pending[0] !== undefined && pending[0].name === event.name) {
              yield { type: 'mark', name: pending.shift()!.name, offsetSeconds };
            }
          }
          if (message.pcm.length > 0) {
            produced += message.pcm.length;
            yield { type: 'audio', pcm: applyGain(message.pcm, gainDb), sampleRateHz: ESPEAK_SAMPLE_RATE_HZ };
          }
        }
        for (const mark of pending) yield { type: 'mark', name: mark.name, offsetSeconds: produced / ESPEAK_SAMPLE_RATE_HZ };
        signal.throwIfAborted();
      }
    }
    yield { type: 'end', durationSeconds: produced / ESPEAK_SAMPLE_RATE_HZ };
  }
}
