/** The part of sherpa-onnx-node's API the engines use (the package ships JSDoc, no types). */
declare module 'sherpa-onnx-node' {
  export interface OfflineTtsConfig {
    model: {
      vits: { model: string; tokens: string; dataDir?: string; lexicon?: string };
      numThreads?: number;
      debug?: number | boolean;
      provider?: string;
    };
    maxNumSentences?: number;
  }
  export interface GeneratedAudio {
    samples: Float32Array;
    sampleRate: number;
  }
  export class OfflineTts {
    static createAsync(config: OfflineTtsConfig): Promise<OfflineTts>;
    readonly sampleRate: number;
    readonly numSpeakers: number;
    generateAsync(request: {
      text: string;
      sid: number;
      speed: number;
      onProgress?: (info: { samples: Float32Array; progress: number }) => number | boolean | void;
    }): Promise<GeneratedAudio>;
  }
  /** Features of the recognisers (16 kHz, 80 log-mel bins for every model family used here). */
  export interface FeatureConfig {
    sampleRate: number;
    featureDim: number;
  }
  export interface Waveform {
    samples: Float32Array;
    sampleRate: number;
  }
  export interface OnlineRecognizerConfig {
    featConfig: FeatureConfig;
    modelConfig: {
      transducer?: { encoder: string; decoder: string; joiner: string };
      zipformer2Ctc?: { model: string };
      tokens: string;
      numThreads: number;
      provider?: string;
      debug?: number;
    };
    decodingMethod?: 'greedy_search' | 'modified_beam_search';
    enableEndpoint?: number;
  }
  /** OnlineRecognizerResult::AsJsonString() of sherpa-onnx. */
  export interface OnlineRecognizerResult {
    text: string;
    tokens: string[];
    timestamps: number[];
    ys_probs?: number[];
  }
  export class OnlineStream {
    acceptWaveform(waveform: Waveform): void;
    inputFinished(): void;
  }
  export class OnlineRecognizer {
    constructor(config: OnlineRecognizerConfig);
    createStream(): OnlineStream;
    isReady(stream: OnlineStream): boolean;
    decode(stream: OnlineStream): void;
    getResult(stream: OnlineStream): OnlineRecognizerResult;
  }
  export interface OfflineRecognizerConfig {
    featConfig: FeatureConfig;
    modelConfig: {
      nemoCtc?: { model: string };
      whisper?: { encoder: string; decoder: string; language: string; task: 'transcribe'; tailPaddings?: number; enableTokenTimestamps?: number };
      senseVoice?: { model: string; language: string; useInverseTextNormalization: number };
      tokens: string;
      numThreads: number;
      provider?: string;
      debug?: number;
    };
    decodingMethod?: 'greedy_search';
  }
  /** OfflineRecognitionResult::AsJsonString() of sherpa-onnx. */
  export interface OfflineRecognizerResult {
    lang: string;
    text: string;
    tokens: string[];
    timestamps: number[];
    durations?: number[];
    ys_log_probs?: number[];
  }
  export class OfflineStream {
    acceptWaveform(waveform: Waveform): void;
  }
  export class OfflineRecognizer {
    constructor(config: OfflineRecognizerConfig);
    createStream(): OfflineStream;
    decode(stream: OfflineStream): void;
    getResult(stream: OfflineStream): OfflineRecognizerResult;
  }
  export interface VadConfig {
    sileroVad: { model: string; threshold: number; minSilenceDuration: number; minSpeechDuration: number; windowSize: number; maxSpeechDuration?: number };
    sampleRate: number;
    numThreads: number;
    debug?: number;
  }
  export class Vad {
    constructor(config: VadConfig, bufferSizeInSeconds: number);
    acceptWaveform(samples: Float32Array): void;
    isDetected(): boolean;
    isEmpty(): boolean;
    pop(): void;
    reset(): void;
  }
  export class SpokenLanguageIdentification {
    constructor(config: { whisper: { encoder: string; decoder: string; tailPaddings?: number }; numThreads: number; debug?: number });
    createStream(): OfflineStream;
    compute(stream: OfflineStream): string;
  }
  const sherpa: {
    OfflineTts: typeof OfflineTts;
    OnlineRecognizer: typeof OnlineRecognizer;
    OfflineRecognizer: typeof OfflineRecognizer;
    Vad: typeof Vad;
    SpokenLanguageIdentification: typeof SpokenLanguageIdentification;
  };
  export default sherpa;
}
