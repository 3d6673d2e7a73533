import { wavHeader } from '../../src/audio/wav.js';

/** A mono PCM16 tone of `seconds` at `rate`: speech-band content for decoders to chew on. */
export function tonePcm(seconds: number, rate: number, frequency = 440): Int16Array {
  const pcm = new Int16Array(Math.round(seconds * rate));
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * frequency * i) / rate));
  return pcm;
}

/** A canonical PCM16 mono WAVE file of a tone. */
export function toneWav(seconds: number, rate = 16000): Buffer {
  const pcm = tonePcm(seconds, rate);
  return Buffer.concat([wavHeader(rate, pcm.byteLength), Buffer.from(pcm.buffer)]);
}

/** A WAVE file with any format tag, channel count and sample bytes. */
export function customWav(options: { tag: number; channels: number; rate: number; bits: number; data: Buffer }): Buffer {
  const { tag, channels, rate, bits, data } = options;
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(tag, 8);
  fmt.writeUInt16LE(channels, 10);
  fmt.writeUInt32LE(rate, 12);
  fmt.writeUInt32LE((rate * channels * bits) / 8, 16);
  fmt.writeUInt16LE((channels * bits) / 8, 20);
  fmt.writeUInt16LE(bits, 22);
  const head = Buffer.alloc(12);
  head.write('RIFF', 0, 'ascii');
  head.writeUInt32LE(4 + fmt.length + 8 + data.length, 4);
  head.write('WAVE', 8, 'ascii');
  const dataHeader = Buffer.alloc(8);
  dataHeader.write('data', 0, 'ascii');
  dataHeader.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, fmt, dataHeader, data]);
}
