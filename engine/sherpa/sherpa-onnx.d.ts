/** The part of sherpa-onnx-node's API this engine uses (the package ships JSDoc, no types). */
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
  const sherpa: { OfflineTts: typeof OfflineTts };
  export default sherpa;
}
