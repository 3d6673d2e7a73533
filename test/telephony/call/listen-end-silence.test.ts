/** The silence that ends a caller's turn: the listen step's own, or the phone default of 240 ms. */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { EngineRegistry } from '../../../engine/registry.js';
import { RecognitionCapacityError } from '../../../engine/stt/capacity.js';
import type { SttEngine, SttStreamOptions } from '../../../engine/types.js';
import { LISTEN_END_SILENCE_MS, listenForCaller, type PhoneListenRequest } from '../../../src/telephony/call/call-turns.js';
import type { MediaChannel } from '../../../src/telephony/media/media-channel.js';

/** The options each stream was opened with; the stream is then refused, which ends a key-less listen at once. */
function recordingEngines(): { engines: EngineRegistry; opened: SttStreamOptions[] } {
  const opened: SttStreamOptions[] = [];
  const engine = {
    id: 'recording',
    capabilities: { languages: ['en'], sampleRatesHz: [8000] },
    open: (options: SttStreamOptions) => {
      opened.push(options);
      throw new RecognitionCapacityError('recording', 1);
    },
  } as unknown as SttEngine;
  return { engines: { live: { stt: { engineFor: () => engine } } } as unknown as EngineRegistry, opened };
}

const media = Object.assign(new EventEmitter(), { audioRateHz: 8000 }) as unknown as MediaChannel;
const request: PhoneListenRequest = {
  speech: true,
  dtmf: false,
  language: 'en',
  vocabulary: [],
  timeoutMs: 2000,
  maxMs: 5000,
  maxDigits: 1,
  preroll: [],
  typedAhead: '',
};

describe('a listen step’s end of turn', () => {
  it('is 240 ms of silence unless the step says otherwise', async () => {
    const { engines, opened } = recordingEngines();
    await listenForCaller(media, engines, 'live', request, new AbortController().signal);
    await listenForCaller(media, engines, 'live', { ...request, endSilenceMs: 800 }, new AbortController().signal);
    expect(LISTEN_END_SILENCE_MS).toBe(240);
    expect(opened.map((options) => options.endSilenceMs)).toEqual([240, 800]);
  });
});
