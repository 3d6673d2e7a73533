/**
 * A worker thread that owns one sherpa-onnx recogniser (see `../stt/worker-host.ts`). Streaming
 * models decode as audio arrives; offline ones (NeMo CTC, Whisper, SenseVoice) decode each
 * utterance when it ends.
 */
import sherpa, { type OfflineRecognizer, type OnlineRecognizer, type OnlineStream } from 'sherpa-onnx-node';
import { serveDecoders, type NativeUtteranceDecoder } from '../stt/worker-host.js';
import type { Hypothesis } from '../types.js';
import { resultWords } from './sherpa-words.js';
import { SHERPA_STT_RATE_HZ, STREAMING_TYPES, type SherpaSttSettings } from './sherpa-stt-protocol.js';

const FEATURES = { sampleRate: SHERPA_STT_RATE_HZ, featureDim: 80 };

function toFloat(pcm: Int16Array): Float32Array {
  const samples = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i]! / 32768;
  return samples;
}

function onlineRecognizer(settings: SherpaSttSettings): OnlineRecognizer {
  const f = settings.files;
  const model =
    settings.type === 'transducer'
      ? { transducer: { encoder: f['encoder']!, decoder: f['decoder']!, joiner: f['joiner']! } }
      : { zipformer2Ctc: { model: f['model']! } };
  return new sherpa.OnlineRecognizer({
    featConfig: FEATURES,
    modelConfig: { ...model, tokens: f['tokens']!, numThreads: settings.threads, debug: 0 },
    decodingMethod: 'greedy_search',
    enableEndpoint: 0,
  });
}

function offlineRecognizer(settings: SherpaSttSettings): OfflineRecognizer {
  const f = settings.files;
  const model =
    settings.type === 'nemo-ctc'
      ? { nemoCtc: { model: f['model']! } }
      : settings.type === 'whisper'
        ? { whisper: { encoder: f['encoder']!, decoder: f['decoder']!, language: settings.language, task: 'transcribe' as const } }
        : { senseVoice: { model: f['model']!, language: settings.language, useInverseTextNormalization: 1 } };
  return new sherpa.OfflineRecognizer({
    featConfig: FEATURES,
    modelConfig: { ...model, tokens: f['tokens']!, numThreads: settings.threads, debug: 0 },
    decodingMethod: 'greedy_search',
  });
}

/** A streaming model: one online stream per utterance, decoded as audio arrives. */
function onlineDecoder(recognizer: OnlineRecognizer): NativeUtteranceDecoder {
  let stream: OnlineStream | null = null;
  let samples = 0;
  const decodeReady = (current: OnlineStream): void => {
    while (recognizer.isReady(current)) recognizer.decode(current);
  };
  const result = (current: OnlineStream): Hypothesis => {
    const raw = recognizer.getResult(current);
    return resultWords(
      { text: raw.text, tokens: raw.tokens, timestamps: raw.timestamps, ...(raw.ys_probs ? { logProbabilities: raw.ys_probs } : {}) },
      samples / SHERPA_STT_RATE_HZ,
    );
  };
  return {
    useVocabulary: () => {},
    start: () => {
      stream = recognizer.createStream();
      samples = 0;
    },
    process: (pcm) => {
      if (!stream || pcm.length === 0) return;
      stream.acceptWaveform({ samples: toFloat(pcm), sampleRate: SHERPA_STT_RATE_HZ });
      samples += pcm.length;
      decodeReady(stream);
    },
    partial: () => {
      if (!stream) return null;
      const hypothesis = result(stream);
      return hypothesis.text === '' ? null : hypothesis;
    },
    finish: () => {
      if (!stream) return { text: '', words: [] };
      const current = stream;
      stream = null;
      current.inputFinished();
      decodeReady(current);
      return result(current);
    },
    free: () => {
      stream = null;
    },
  };
}

/** An offline model: the utterance is gathered and decoded at its end. */
function offlineDecoder(recognizer: OfflineRecognizer): NativeUtteranceDecoder {
  let chunks: Int16Array[] | null = null;
  return {
    useVocabulary: () => {},
    start: () => {
      chunks = [];
    },
    process: (pcm) => {
      chunks?.push(pcm);
    },
    partial: () => null,
    finish: () => {
      if (!chunks) return { text: '', words: [] };
      const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
      const pcm = new Int16Array(length);
      let at = 0;
      for (const chunk of chunks) {
        pcm.set(chunk, at);
        at += chunk.length;
      }
      chunks = null;
      if (length === 0) return { text: '', words: [] };
      const stream = recognizer.createStream();
      stream.acceptWaveform({ samples: toFloat(pcm), sampleRate: SHERPA_STT_RATE_HZ });
      recognizer.decode(stream);
      const raw = recognizer.getResult(stream);
      return resultWords(
        { text: raw.text, tokens: raw.tokens, timestamps: raw.timestamps, ...(raw.ys_log_probs?.length ? { logProbabilities: raw.ys_log_probs } : {}) },
        length / SHERPA_STT_RATE_HZ,
      );
    },
    free: () => {
      chunks = null;
    },
  };
}

serveDecoders<SherpaSttSettings>((settings) => {
  if (STREAMING_TYPES.has(settings.type)) {
    const recognizer = onlineRecognizer(settings);
    return () => onlineDecoder(recognizer);
  }
  const recognizer = offlineRecognizer(settings);
  return () => offlineDecoder(recognizer);
});
