/** A listen step when every recogniser is taken: the call goes on with keys, or skips the step, instead of failing. */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { EngineRegistry } from '../../../engine/registry.js';
import { RecognitionCapacityError } from '../../../engine/stt/capacity.js';
import type { SttEngine } from '../../../engine/types.js';
import { listenForCaller, type PhoneListenRequest } from '../../../src/telephony/call/call-turns.js';
import type { MediaChannel } from '../../../src/telephony/media/media-channel.js';

/** A recogniser that is full: every stream it is asked for is refused. */
const fullEngine = {
  id: 'full',
  capabilities: { languages: ['en'], sampleRatesHz: [8000] },
  open: () => {
    throw new RecognitionCapacityError('full', 8);
  },
} as unknown as SttEngine;
const engines = { live: { stt: { engineFor: () => fullEngine } } } as unknown as EngineRegistry;

const request = (dtmf: boolean): PhoneListenRequest => ({
  speech: true,
  dtmf,
  language: 'en',
  vocabulary: [],
  timeoutMs: 2000,
  maxMs: 5000,
  maxDigits: 1,
  preroll: [],
  typedAhead: '',
});
const media = (): MediaChannel & EventEmitter => Object.assign(new EventEmitter(), { audioRateHz: 8000 }) as unknown as MediaChannel & EventEmitter;

describe('listenForCaller with every recogniser busy', () => {
  it('listens for keys only and says so', async () => {
    const channel = media();
    const outcome = listenForCaller(channel, engines, 'live', request(true), new AbortController().signal);
    setTimeout(() => channel.emit('dtmf', '5', 'rfc4733'), 20);
    expect(await outcome).toEqual({ heard: '', digits: '5', reason: 'digits', audioSeconds: 0, recogniserBusy: true, rest: '', words: [], confidence: null });
    expect(channel.listenerCount('dtmf')).toBe(0);
  });

  it('ends at once as busy when the step takes no keys', async () => {
    const started = performance.now();
    const outcome = await listenForCaller(media(), engines, 'live', request(false), new AbortController().signal);
    expect(outcome).toEqual({ heard: '', digits: '', reason: 'busy', audioSeconds: 0, recogniserBusy: true, rest: '' });
    expect(performance.now() - started).toBeLessThan(100);
  });
});
