/** Output audio formats of synthesis (spec 2.4 AudioFormat). */
export type FormatId = 'wav' | 'mp3' | 'opus' | 'pcm16' | 'mulaw' | 'alaw';

/** One output format with its permitted sample rates. */
export interface AudioFormat {
  readonly id: FormatId;
  readonly mime: string;
  readonly extension: string;
  readonly description: string;
  readonly sample_rates_hz: readonly number[];
  readonly default_sample_rate_hz: number;
  readonly streamable: boolean;
}

/** The rates PCM containers accept. */
const PCM_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000] as const;
/**
 * MP3 rates: the MPEG-2 and 2.5 rates, made for speech bandwidth. Our speech sources end at
 * 11 kHz, so 32–48 kHz MP3 would only cost bytes and encoder time (under 200× real time here);
 * WAV and PCM serve those rates.
 */
const MP3_RATES = [8000, 11025, 12000, 16000, 22050, 24000] as const;
/** The rates an Opus encoder accepts. */
const OPUS_RATES = [8000, 12000, 16000, 24000, 48000] as const;

/** Every output format, in the order they are listed to clients. */
export const FORMATS: readonly AudioFormat[] = [
  {
    id: 'mp3',
    mime: 'audio/mpeg',
    extension: 'mp3',
    description: 'MPEG-2/2.5 Layer III, mono, variable bit rate (LAME -V7, about 40 kbps).',
    sample_rates_hz: MP3_RATES,
    default_sample_rate_hz: 24000,
    streamable: true,
  },
  {
    id: 'wav',
    mime: 'audio/wav',
    extension: 'wav',
    description: 'RIFF WAVE, 16-bit signed little-endian PCM, mono.',
    sample_rates_hz: PCM_RATES,
    default_sample_rate_hz: 24000,
    streamable: false,
  },
  {
    id: 'opus',
    mime: 'audio/ogg; codecs=opus',
    extension: 'opus',
    description: 'Opus in an Ogg container (RFC 7845), mono, 20 ms frames. Decoders play it at 48 kHz; the header records the source rate.',
    sample_rates_hz: OPUS_RATES,
    default_sample_rate_hz: 48000,
    streamable: true,
  },
  {
    id: 'pcm16',
    mime: 'audio/pcm',
    extension: 'pcm',
    description: 'Raw 16-bit signed little-endian PCM, mono, no header.',
    sample_rates_hz: PCM_RATES,
    default_sample_rate_hz: 24000,
    streamable: true,
  },
  {
    id: 'mulaw',
    mime: 'audio/basic',
    extension: 'ulaw',
    description: 'Raw G.711 µ-law, 8 bits per sample, mono, no header (telephony).',
    sample_rates_hz: [8000],
    default_sample_rate_hz: 8000,
    streamable: true,
  },
  {
    id: 'alaw',
    mime: 'audio/x-alaw-basic',
    extension: 'alaw',
    description: 'Raw G.711 A-law, 8 bits per sample, mono, no header (telephony).',
    sample_rates_hz: [8000],
    default_sample_rate_hz: 8000,
    streamable: true,
  },
];

/** The format used when a request names none (spec 2.1). */
export const DEFAULT_FORMAT: FormatId = 'mp3';

/** Finds a format by id. */
export function findFormat(id: string): AudioFormat | undefined {
  return FORMATS.find((format) => format.id === id);
}

/**
 * The media type to send for a format at a rate. Headerless PCM carries its rate as a
 * parameter, since nothing in the bytes says it (`audio/L16` is not used: it is big-endian).
 */
export function mediaTypeFor(format: AudioFormat, sampleRateHz: number): string {
  return format.id === 'pcm16' ? `audio/pcm; rate=${sampleRateHz}; channels=1` : format.mime;
}
