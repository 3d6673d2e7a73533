/**
 * Silero voice activity detection through sherpa-onnx, as the endpointer's detector where its
 * model is installed (`silero_vad.onnx`, v4 or v5). Silero runs at 16 kHz only; streams at
 * other rates keep WebRTC's detector. sherpa-onnx ends the process when the model's inputs are
 * not the ones it expects, so they are checked first.
 */
import { readFile } from 'node:fs/promises';
import sherpa, { type Vad } from 'sherpa-onnx-node';
import type { FrameClassifier, FrameClassifierFactory } from '../vad/frame-classifier.js';
import { WebRtcVad } from '../vad/webrtc-vad.js';
import { readOnnxGraphIo } from './onnx-metadata.js';
import { SherpaModelError } from './sherpa-model-check.js';

/** The rate Silero classifies. */
const SILERO_RATE_HZ = 16000;
/** Samples per window sherpa-onnx feeds the model (32 ms). */
const WINDOW_SAMPLES = 512;
/** Speech probability above which a window is speech. */
const THRESHOLD = 0.5;

/** The inputs and outputs sherpa-onnx accepts, by Silero version. */
const INTERFACES = [
  { version: 'v5', inputs: ['input', 'state', 'sr'], outputs: ['output', 'stateN'] },
  { version: 'v4', inputs: ['input', 'sr', 'h', 'c'], outputs: ['output', 'hn', 'cn'] },
] as const;

/** Detectors kept for the next stream (each holds an onnxruntime session). */
const IDLE_DETECTORS = 32;

/**
 * sherpa-onnx detectors of one model, reused: making one loads the model into a new
 * onnxruntime session, which would otherwise happen on the event loop at every stream's start.
 */
class SileroDetectorPool {
  private readonly idle: Vad[] = [];

  constructor(private readonly model: string) {}

  take(): Vad {
    return (
      this.idle.pop() ??
      new sherpa.Vad(
        // Short smoothing: the endpointer applies its own start and hangover rules.
        {
          sileroVad: {
            model: this.model,
            threshold: THRESHOLD,
            minSilenceDuration: 0.05,
            minSpeechDuration: 0.03,
            windowSize: WINDOW_SAMPLES,
            maxSpeechDuration: 30,
          },
          sampleRate: SILERO_RATE_HZ,
          numThreads: 1,
          debug: 0,
        },
        // Seconds of audio it buffers; it grows by itself for longer speech.
        5,
      )
    );
  }

  give(vad: Vad): void {
    if (this.idle.length >= IDLE_DETECTORS) return;
    vad.reset();
    this.idle.push(vad);
  }
}

/** One stream's Silero detector, fed 20 ms frames. */
class SileroFrameClassifier implements FrameClassifier {
  readonly frameSamples = SILERO_RATE_HZ / 50;
  private vad: Vad | null;
  private readonly samples = new Float32Array(this.frameSamples);

  constructor(private readonly pool: SileroDetectorPool) {
    this.vad = pool.take();
  }

  isSpeech(frame: Int16Array): boolean {
    if (!this.vad) throw new Error('the voice activity detector is closed');
    if (frame.length !== this.frameSamples) throw new RangeError(`a frame has ${this.frameSamples} samples, not ${frame.length}`);
    for (let i = 0; i < frame.length; i++) this.samples[i] = frame[i]! / 32768;
    this.vad.acceptWaveform(this.samples);
    const speech = this.vad.isDetected();
    // sherpa-onnx keeps finished speech segments for its own callers: they are dropped here.
    while (!this.vad.isEmpty()) this.vad.pop();
    return speech;
  }

  close(): void {
    if (this.vad) this.pool.give(this.vad);
    this.vad = null;
  }
}

/**
 * Checks a Silero model the way sherpa-onnx will read it.
 * @throws SherpaModelError when it is not ONNX or has neither Silero interface.
 */
export async function checkSileroModel(file: string): Promise<void> {
  let io: { inputs: string[]; outputs: string[] };
  try {
    io = readOnnxGraphIo(await readFile(file));
  } catch (error) {
    throw new SherpaModelError(`${file} is not an ONNX model (${(error as Error).message})`);
  }
  const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((name, i) => name === b[i]);
  if (!INTERFACES.some((known) => same(io.inputs, known.inputs) && same(io.outputs, known.outputs))) {
    throw new SherpaModelError(
      `${file} is not a Silero VAD model sherpa-onnx runs: inputs (${io.inputs.join(', ')}) and outputs (${io.outputs.join(', ')}) should be ${INTERFACES.map((known) => `(${known.inputs.join(', ')}) → (${known.outputs.join(', ')})`).join(' or ')}`,
    );
  }
}

/**
 * Detectors for streams: Silero at 16 kHz, WebRTC's at other rates (`loadWebRtcVad()` must
 * have run). The model is checked here; each stream then opens its own detector.
 * @throws SherpaModelError for a model sherpa-onnx could not run.
 */
export async function sileroDetectors(model: string): Promise<FrameClassifierFactory> {
  await checkSileroModel(model);
  const pool = new SileroDetectorPool(model);
  // Loading it once here surfaces a broken file at start rather than on the first call.
  new SileroFrameClassifier(pool).close();
  return (rateHz) => (rateHz === SILERO_RATE_HZ ? new SileroFrameClassifier(pool) : WebRtcVad.create(rateHz));
}
