/**
 * eSpeak NG as Debian ships it (`libespeak-ng1` 1.51, `espeak-ng-data`), driven through koffi.
 * About four times faster than the WebAssembly build this engine used before
 * (docs/performance.md, "Measurements behind the code's choices").
 *
 * libespeak-ng keeps its whole state in globals, so two threads must never share one loaded
 * copy: every thread loads its own copy of the library file (a private temporary copy, opened
 * and then unlinked), which gives it its own globals.
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import koffi, { type LibraryHandle, type TypeObject } from 'koffi';
import type { EspeakEvent } from './espeak-protocol.js';

/** Where Debian-like systems keep the library; `SPRACHROHR_ESPEAK_LIBRARY` names another. */
const LIBRARY_DIRECTORIES = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/usr/local/lib'];
const LIBRARY_FILE = 'libespeak-ng.so.1';

/** espeak_AUDIO_OUTPUT: audio goes to the callback, espeak_Synth returns when done. */
const AUDIO_OUTPUT_SYNCHRONOUS = 2;
/** espeak_Initialize option: report errors instead of calling exit(). */
const INITIALIZE_DONT_EXIT = 0x8000;
/** espeak_Synth flags: UTF-8 text, SSML markup, `[[…]]` phoneme input. */
const SYNTH_FLAGS = 0x1 | 0x10 | 0x100;
const POSITION_CHARACTER = 1;
const PARAMETER = { rate: 1, pitch: 3, range: 4 } as const;
/** espeak_EVENT_TYPE values the engine reads. */
const EVENT_TYPES: Readonly<Record<number, EspeakEvent['type']>> = { 1: 'word', 2: 'sentence', 3: 'mark', 5: 'end' };

/**
 * The library file: `SPRACHROHR_ESPEAK_LIBRARY` when set, else the first of the usual
 * directories that has it.
 * @throws Error naming the Debian packages when it is nowhere.
 */
export function findEspeakLibrary(configured: string | undefined): string {
  if (configured) {
    if (!existsSync(configured)) throw new Error(`SPRACHROHR_ESPEAK_LIBRARY names ${configured}, which does not exist`);
    return configured;
  }
  for (const directory of LIBRARY_DIRECTORIES) {
    const candidate = path.join(directory, LIBRARY_FILE);
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`eSpeak NG's library ${LIBRARY_FILE} is missing (apt-get install libespeak-ng1 espeak-ng-data, or set SPRACHROHR_ESPEAK_LIBRARY)`);
}

/** One thread's own eSpeak NG. */
export class EspeakNative {
  readonly sampleRateHz: number;
  private readonly setVoiceByName: (name: string) => number;
  private readonly setParameter: (parameter: number, value: number, relative: number) => number;
  private readonly synth: (
    text: Buffer,
    size: number,
    position: number,
    positionType: number,
    endPosition: number,
    flags: number,
    uid: null,
    userData: null,
  ) => number;
  private readonly eventType: TypeObject;
  private readonly eventSize: number;
  private readonly idOffset: number;
  /** The callback of the synthesis under way. */
  private onChunk: ((pcm: Int16Array, events: EspeakEvent[]) => boolean) | null = null;

  /** Loads a private copy of `libraryPath` and initialises it. */
  constructor(libraryPath: string) {
    const copy = path.join(os.tmpdir(), `sprachrohr-espeak-${process.pid}-${randomUUID()}.so`);
    copyFileSync(libraryPath, copy);
    let library: LibraryHandle;
    try {
      library = koffi.load(copy);
    } finally {
      // The mapping outlives the file; nothing is left behind in the temporary directory.
      unlinkSync(copy);
    }
    const suffix = randomUUID().replaceAll('-', '');
    this.eventType = koffi.struct(`espeak_EVENT_${suffix}`, {
      type: 'int',
      unique_identifier: 'uint',
      text_position: 'int',
      length: 'int',
      audio_position: 'int',
      sample: 'int',
      user_data: 'void *',
      // A union of int, const char * and char[8]; only a mark's name (the pointer) is read.
      id: 'void *',
    });
    this.eventSize = koffi.sizeof(this.eventType);
    this.idOffset = koffi.offsetof(this.eventType, 'id');
    const callbackType = koffi.proto(`int espeak_callback_${suffix}(int16_t *wav, int samples, void *events)`);
    const initialize = library.func('int espeak_Initialize(int output, int buflength, const char *path, int options)');
    const setCallback = library.func(`void espeak_SetSynthCallback(espeak_callback_${suffix} *callback)`);
    this.setVoiceByName = library.func('int espeak_SetVoiceByName(const char *name)');
    this.setParameter = library.func('int espeak_SetParameter(int parameter, int value, int relative)');
    this.synth = library.func(
      'int espeak_Synth(const char *text, size_t size, uint position, int positionType, uint endPosition, uint flags, void *uid, void *userData)',
    );
    const rate = initialize(AUDIO_OUTPUT_SYNCHRONOUS, 100, null, INITIALIZE_DONT_EXIT) as number;
    if (rate <= 0) throw new Error(`eSpeak NG did not start (espeak_Initialize returned ${rate}); is espeak-ng-data installed?`);
    this.sampleRateHz = rate;
    // Registered once for the thread's lifetime; it hands each call to the synthesis under way.
    const callback = koffi.register(
      (wav: unknown, samples: number, events: unknown) => (this.deliver(wav, samples, events) ? 1 : 0),
      koffi.pointer(callbackType),
    );
    setCallback(callback);
  }

  /** Selects a voice such as `gmw/de+f3`; false when eSpeak has no such voice. */
  setVoice(name: string): boolean {
    return this.setVoiceByName(name) === 0;
  }

  /** Words per minute, base pitch (0–100) and pitch range (0–100). */
  setDelivery(wordsPerMinute: number, pitch: number, range: number): void {
    this.setParameter(PARAMETER.rate, wordsPerMinute, 0);
    this.setParameter(PARAMETER.pitch, pitch, 0);
    this.setParameter(PARAMETER.range, range, 0);
  }

  /**
   * Synthesises SSML (with `[[…]]` phoneme input) in the current voice. `onChunk` receives
   * audio about every 100 ms with the events inside it; returning true stops the synthesis.
   * @throws Error when eSpeak refuses the text
   */
  synthesize(text: string, onChunk: (pcm: Int16Array, events: EspeakEvent[]) => boolean): void {
    const bytes = Buffer.from(`${text}\0`, 'utf8');
    this.onChunk = onChunk;
    try {
      const result = this.synth(bytes, bytes.length, 0, POSITION_CHARACTER, 0, SYNTH_FLAGS, null, null);
      // EE_OK is 0; a stop asked for by the callback is not an error.
      if (result !== 0 && result !== 1) throw new Error(`eSpeak NG refused the text (espeak_Synth returned ${result})`);
    } finally {
      this.onChunk = null;
    }
  }

  private deliver(wav: unknown, samples: number, events: unknown): boolean {
    const onChunk = this.onChunk;
    if (!onChunk) return true;
    // The buffer belongs to eSpeak and is reused: copy it out.
    const pcm = samples > 0 && wav !== null ? new Int16Array(koffi.view(wav, samples * 2).slice(0)) : new Int16Array(0);
    const raw: EspeakEvent[] = [];
    if (events !== null) {
      for (let index = 0; ; index++) {
        const offset = index * this.eventSize;
        const event = koffi.decode(events, offset, this.eventType) as { type: number; text_position: number; length: number; audio_position: number };
        if (event.type === 0) break;
        const type = EVENT_TYPES[event.type];
        if (!type) continue;
        const name = type === 'mark' ? ((koffi.decode(events, offset + this.idOffset, 'const char *') as string | null) ?? '') : undefined;
        raw.push({
          type,
          textPosition: event.text_position,
          length: event.length,
          audioPositionMs: event.audio_position,
          ...(name !== undefined ? { name } : {}),
        });
      }
    }
    return onChunk(pcm, raw);
  }
}
