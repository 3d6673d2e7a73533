/**
 * The messages between the call sessions (main thread) and the media thread, which owns every
 * RTP socket and the pacer clock. Times cross the thread boundary as absolute milliseconds
 * (`performance.timeOrigin + performance.now()`): each thread's `performance.now()` counts
 * from its own start.
 */
import type { Direction } from '../sdp/direction.js';
import type { MediaCodec } from '../sdp/media-codec.js';
import type { FrameRun } from '../rtp/paced-stream.js';
import type { AudioFrames } from './audio-batch.js';
import type { PacingStats } from '../rtp/pacer.js';

/** What the call agreed on for its media (from the SDP offer/answer). */
export interface CallMedia {
  readonly codec: MediaCodec;
  readonly telephoneEvent: number | null;
  readonly address: string;
  readonly port: number;
  /** Where the caller wants RTCP: a=rtcp (RFC 3605), else the RTP port + 1 (RFC 3550 §11); the source of its own RTCP wins once heard. */
  readonly rtcp: { readonly address: string; readonly port: number };
  /** RTCP shares the RTP port both ways (RFC 5761 a=rtcp-mux, offered by the caller and accepted by us). */
  readonly rtcpMux: boolean;
  /** Our direction: `sendonly`/`inactive` while the caller holds us, `recvonly` never sends. */
  readonly direction: Direction;
  /**
   * The address the call's signalling came from. With the SDP's address, the only one whose
   * RTP and RTCP are taken (a caller behind NAT sends from its signalling address, whatever
   * private address its SDP names).
   */
  readonly signallingAddress: string;
}

/** Call quality for the log at the end of a call. */
export type CallQuality = Record<string, number | undefined>;

/** How much of a prompt went out, reported once its queue is empty (played out or stopped). */
export interface PlayoutReport {
  /** Audio frames of the prompt that were sent. */
  readonly framesSent: number;
  /** When the prompt's first packet was sent (absolute ms), or 0 when none was. */
  readonly firstPacketAt: number;
  /** When the caller's voice was last heard (absolute ms), or 0 when it never was. */
  readonly lastVoiceAt: number;
  /** Every frame of the prompt was sent: it ended and its queue ran dry, nothing of it was dropped. */
  readonly complete: boolean;
}

/** Main thread → media thread. `id` names a call's media. */
export type MediaCommand =
  | { readonly op: 'open'; readonly id: number }
  | { readonly op: 'start'; readonly id: number; readonly media: CallMedia }
  | { readonly op: 'update'; readonly id: number; readonly media: CallMedia }
  /** A prompt starts: frames of earlier prompts are no longer taken. */
  | { readonly op: 'prompt'; readonly id: number; readonly prompt: number; readonly bargeIn: boolean }
  | { readonly op: 'frames'; readonly id: number; readonly prompt: number; readonly payloadType: number; readonly run: FrameRun }
  /** The prompt's last frame has been sent over: report when it has played out. */
  | { readonly op: 'end'; readonly id: number; readonly prompt: number }
  | { readonly op: 'stop'; readonly id: number }
  /** Report `mark` once every frame of prompt `prompt` queued before it has been played (or dropped). */
  | { readonly op: 'mark'; readonly id: number; readonly prompt: number; readonly mark: number }
  | { readonly op: 'dtmf'; readonly id: number; readonly key: string }
  | { readonly op: 'close'; readonly id: number }
  /** Joins call `id`'s media to call `other`'s (each leaves any bridge it was in); prompts stop on both. */
  | { readonly op: 'bridge'; readonly id: number; readonly other: number }
  /** Ends call `id`'s bridge, for both calls. */
  | { readonly op: 'unbridge'; readonly id: number }
  | { readonly op: 'pacing'; readonly request: number; readonly reset: boolean };

/** Media thread → main thread. */
export type MediaEvent =
  /** Started; `nice` is its scheduling priority, `priorityRefused` why it could not be raised. */
  | { readonly ev: 'ready'; readonly nice: number; readonly priorityRefused?: string }
  | { readonly ev: 'opened'; readonly id: number; readonly port: number }
  | { readonly ev: 'open-failed'; readonly id: number; readonly exhausted: boolean; readonly message: string }
  /** Caller audio of every call from a tick (not per call: one message for all). */
  | { readonly ev: 'audio'; readonly frames: AudioFrames }
  | { readonly ev: 'dtmf'; readonly id: number; readonly key: string; readonly via: 'rfc4733' | 'inband' }
  | { readonly ev: 'speech-start'; readonly id: number }
  | { readonly ev: 'played-out'; readonly id: number; readonly prompt: number; readonly report: PlayoutReport }
  /** A mark came due: its audio was played, or (`played` false) dropped before it was. */
  | { readonly ev: 'mark'; readonly id: number; readonly mark: number; readonly played: boolean }
  | { readonly ev: 'closed'; readonly id: number; readonly quality: CallQuality }
  | { readonly ev: 'pacing'; readonly request: number; readonly stats: PacingStats }
  | { readonly ev: 'error'; readonly id: number | null; readonly message: string; readonly stack?: string };

/** Now, in milliseconds that mean the same in every thread. */
export function absoluteNow(): number {
  return performance.timeOrigin + performance.now();
}

/** An absolute time (from {@link absoluteNow}) on this thread's `performance.now()` clock; 0 stays 0 (never). */
export function toLocalTime(absoluteMs: number): number {
  return absoluteMs === 0 ? 0 : absoluteMs - performance.timeOrigin;
}
