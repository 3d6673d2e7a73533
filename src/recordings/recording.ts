/** What the telephony side hands over, and what the service keeps and shows of a voicemail. */
import type { RecordingEnd, RecordingRecord } from '../store/store.js';

export type { RecordingEnd, RecordingTranscript, TranscriptStatus } from '../store/store.js';

/** A caller's message as a call captured it: PCM16 mono samples and where they came from. */
export interface NewRecording {
  readonly callId: string;
  /** The dialplan route (the called number) that recorded it. */
  readonly route: string;
  readonly caller: string;
  readonly called: string;
  /** The language the caller was spoken to in; the transcript is made in it. */
  readonly language: string;
  readonly pcm: Int16Array;
  /** 8000 or 16000 on a call; any rate from 8 to 48 kHz is kept as given. */
  readonly sampleRateHz: number;
  readonly endedBy: RecordingEnd;
}

/** A stored voicemail: its index entry and when retention removes it. */
export interface Recording extends RecordingRecord {
  /** When the retention sweep removes it; `null` while recordings are kept until deleted. */
  readonly expiresAt: string | null;
}
