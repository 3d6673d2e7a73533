import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { setImmediate } from 'node:timers/promises';
import { createEncoder, type WasmMediaEncoder } from 'wasm-media-encoders';

/**
 * LAME's variable-bit-rate quality (0 best … 9 smallest). VBR encodes faster than constant bit
 * rate at equal speech quality (docs/performance.md, "Measurements behind the code's choices").
 */
const VBR_QUALITY = 7;
/** Idle encoder instances kept for reuse. */
const MAX_IDLE = 16;
/**
 * Instances made and warmed at start. Making one costs about 6 ms and its first encode another
 * 10–15 ms (LAME builds its tables), both on the event loop, so a burst of MP3 requests should
 * find them ready.
 */
const PREPARED = 8;

type LameInstance = WasmMediaEncoder<'audio/mpeg'>;
const idle: LameInstance[] = [];
/**
 * LAME compiled once: the package's own helper compiles the WebAssembly for every instance
 * (11 ms each here, on the event loop); instantiating a compiled module is cheap.
 */
let compiled: WasmModule | undefined;

/** `WebAssembly.Module`, named through the package's own signature (no DOM types here). */
type WasmModule = Parameters<typeof createEncoder>[1];
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }).WebAssembly;

/**
 * Compiles the encoder at start, so no request pays for it, and makes `prepared` instances
 * ready (a thread that encodes one stream at a time needs one).
 */
export async function loadMp3Encoder(prepared = PREPARED): Promise<void> {
  if (compiled) return;
  const file = createRequire(import.meta.url).resolve('wasm-media-encoders/wasm/mp3');
  compiled = await wasm.compile(await readFile(file));
  for (let i = 0; i < prepared; i++) idle.push(await newInstance());
}

/**
 * A new LAME instance, run once over half a second of a voiced test signal so its tables are
 * built (silence does not build them: the first real request then paid 200–300 ms).
 */
async function newInstance(): Promise<LameInstance> {
  if (!compiled) throw new Error('the MP3 encoder is not loaded; call loadMp3Encoder() at start');
  const instance = await createEncoder('audio/mpeg', compiled);
  instance.configure({ sampleRate: 24_000, channels: 1, vbrQuality: VBR_QUALITY });
  const warmup = new Float32Array(12_000);
  for (let i = 0; i < warmup.length; i++) warmup[i] = 0.3 * Math.sin((2 * Math.PI * 180 * i) / 24_000) + 0.1 * Math.sin((2 * Math.PI * 1900 * i) / 24_000);
  instance.encode([warmup]);
  instance.finalize();
  return instance;
}

/**
 * An MP3 stream on its own LAME instance (WebAssembly) taken from a small pool: streams never
 * share encoder state, and each chunk is encoded as it arrives.
 */
export class Mp3StreamEncoder {
  private instance: LameInstance | null;

  private constructor(instance: LameInstance, sampleRateHz: number) {
    this.instance = instance;
    instance.configure({ sampleRate: sampleRateHz, channels: 1, vbrQuality: VBR_QUALITY });
  }

  /** Opens a stream at a rate LAME accepts (8000–48000 Hz). */
  static async open(sampleRateHz: number): Promise<Mp3StreamEncoder> {
    const ready = idle.pop();
    if (ready) return new Mp3StreamEncoder(ready, sampleRateHz);
    // Give the event loop a turn before the costly creation, so a burst spreads out.
    await setImmediate();
    return new Mp3StreamEncoder(await newInstance(), sampleRateHz);
  }

  write(pcm: Int16Array): Buffer[] {
    if (!this.instance) throw new Error('the MP3 stream is closed');
    const samples = new Float32Array(pcm.length);
    for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i]! / 32768;
    // encode() returns a view into WebAssembly memory: copy it before the next call.
    const bytes = this.instance.encode([samples]);
    return bytes.length > 0 ? [Buffer.from(bytes)] : [];
  }

  end(): Buffer[] {
    if (!this.instance) throw new Error('the MP3 stream is closed');
    const tail = Buffer.from(this.instance.finalize());
    if (idle.length < MAX_IDLE) idle.push(this.instance);
    this.instance = null;
    return tail.length > 0 ? [tail] : [];
  }
}
