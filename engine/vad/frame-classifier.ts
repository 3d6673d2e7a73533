/**
 * A voice activity detector as the endpointer sees it: 20 ms frames in, speech or not out.
 * WebRTC's detector is the default; Silero (through sherpa-onnx) replaces it where its model
 * is installed.
 */
export interface FrameClassifier {
  /** Samples per frame (20 ms at the stream's rate). */
  readonly frameSamples: number;
  /** Whether one frame (exactly `frameSamples` samples) holds speech. */
  isSpeech(frame: Int16Array): boolean;
  /** Frees the detector. */
  close(): void;
}

/** Makes a detector for one stream at a rate. */
export type FrameClassifierFactory = (sampleRateHz: number) => FrameClassifier;
