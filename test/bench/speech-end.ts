/**
 * Where speech ends in a recording, for benchmarks that measure from the end of the caller's
 * speech: the last frame within 30 dB of the loudest, measured after a high-pass filter that
 * removes the recording's DC offset and rumble. In Debian's "go forward ten meters" that is the
 * quiet release after "meters", about 110 ms past the last frame louder than RMS 500 (the line
 * earlier runs measured from, which the voice detector rightly hears past).
 */

/** Index of the last `frameSamples`-sample frame of `pcm` within 30 dB of its loudest (after a high-pass); -1 for silence. */
export function lastSpeechFrame(pcm: Int16Array, frameSamples: number): number {
  const filtered = new Float64Array(pcm.length);
  let previousIn = 0;
  let previousOut = 0;
  for (let i = 0; i < pcm.length; i++) {
    const x = pcm[i]!;
    previousOut = x - previousIn + 0.97 * previousOut;
    previousIn = x;
    filtered[i] = previousOut;
  }
  const frameRms: number[] = [];
  for (let at = 0; at + frameSamples <= pcm.length; at += frameSamples) {
    let sum = 0;
    for (let i = at; i < at + frameSamples; i++) sum += filtered[i]! ** 2;
    frameRms.push(Math.sqrt(sum / frameSamples));
  }
  const loudest = Math.max(0, ...frameRms);
  if (loudest === 0) return -1;
  const floor = loudest * 10 ** (-30 / 20);
  let last = -1;
  frameRms.forEach((rms, frame) => {
    if (rms > floor) last = frame;
  });
  return last;
}
