/**
 * A recogniser is decoding as many streams as it can keep up with in real time; a new stream
 * is refused rather than slowing every open one down.
 */
export class RecognitionCapacityError extends Error {
  constructor(engine: string, limit: number) {
    super(`${engine} already decodes ${limit} streams, as many as it keeps up with in real time`);
    this.name = 'RecognitionCapacityError';
  }
}
