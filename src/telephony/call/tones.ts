/**
 * Tones played to a caller: the voicemail beep and the Swiss ringback (425 Hz, one second on,
 * four off: ITU-T E.180 supplement 2, Switzerland), generated at the call's playback rate.
 */
import type { MediaChannel } from '../media/media-channel.js';

/** A sine tone. */
export interface Tone {
  readonly hz: number;
  readonly ms: number;
}

export const BEEP: Tone = { hz: 1000, ms: 400 };
export const RINGBACK: Tone = { hz: 425, ms: 1000 };
/** The silence between two ringback tones. */
export const RINGBACK_PAUSE_MS = 4000;

/** The tone's samples, faded in and out over 10 ms so that it does not click. */
export function toneSamples(tone: Tone, rateHz: number): Int16Array {
  const samples = Math.round((rateHz * tone.ms) / 1000);
  const fade = Math.round(rateHz / 100);
  const out = new Int16Array(samples);
  for (let n = 0; n < samples; n++) {
    const envelope = Math.min(1, n / fade, (samples - 1 - n) / fade);
    out[n] = Math.round(Math.sin((2 * Math.PI * tone.hz * n) / rateHz) * 8000 * envelope);
  }
  return out;
}

/** Plays a tone as a prompt (no barge-in); resolves when it has played out, or at once when `signal` aborts (the tone is stopped). */
export async function playTone(media: MediaChannel, tone: Tone, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  media.startPrompt(false);
  media.play(toneSamples(tone, media.playbackRateHz));
  media.endPrompt();
  let stop = (): void => undefined;
  const aborted = new Promise<void>((resolve) => {
    stop = () => {
      media.stopPlayback();
      resolve();
    };
    signal.addEventListener('abort', stop, { once: true });
  });
  await Promise.race([media.playedOut(), aborted]);
  signal.removeEventListener('abort', stop);
}
