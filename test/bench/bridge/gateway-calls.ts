/**
 * The gateway's side of the bridge benchmark: a media thread as the telephony service starts
 * it, a channel per far-end socket negotiated for PCMU to it, the bridged legs joined in pairs,
 * and the prompt calls playing a prompt that never ends (fed a second of audio a second, as
 * synthesis would).
 */
import { pino } from 'pino';
import type { MediaChannel } from '../../../src/telephony/media/media-channel.js';
import { MediaThread } from '../../../src/telephony/media/media-thread.js';
import { tonePcm } from '../../helpers/audio-fixtures.js';
import { pcmuMedia } from '../../helpers/rtp-endpoint.js';

/**
 * Where the benchmark's calls take their ports: in the service's default range, below the
 * kernel's ephemeral ports (where the far ends' sockets are), with room for ports another
 * program holds.
 */
const FIRST_PORT = 24_000;
const SPARE_PORTS = 200;

/** The media thread and its calls. */
export class GatewayCalls {
  private feeding: NodeJS.Timeout | null = null;

  private constructor(
    readonly thread: MediaThread,
    /** Bridged legs in pairs: 0 with 1, 2 with 3, … */
    readonly legs: MediaChannel[],
    readonly prompts: MediaChannel[],
  ) {}

  /** Opens a call for each far-end port, negotiated to send there. */
  static async open(legPorts: number[], promptPorts: number[]): Promise<GatewayCalls> {
    const calls = legPorts.length + promptPorts.length;
    const thread = new MediaThread({
      host: '127.0.0.1',
      rtpPorts: { min: FIRST_PORT, max: FIRST_PORT + 2 * calls + SPARE_PORTS - 1 },
      logger: pino({ level: 'silent' }),
    });
    await thread.start();
    const connect = async (port: number): Promise<MediaChannel> => {
      const channel = await thread.open();
      channel.negotiated(pcmuMedia('127.0.0.1', port, '127.0.0.1'));
      return channel;
    };
    const legs: MediaChannel[] = [];
    for (const port of legPorts) legs.push(await connect(port));
    const prompts: MediaChannel[] = [];
    for (const port of promptPorts) prompts.push(await connect(port));
    return new GatewayCalls(thread, legs, prompts);
  }

  /** The gateway port each leg's far end sends to. */
  get legTargets(): number[] {
    return this.legs.map((channel) => channel.port);
  }

  /** Starts every prompt call's prompt: two seconds ahead, then a second each second. */
  startPrompts(): void {
    const second = tonePcm(1, 8000, 440);
    for (const channel of this.prompts) {
      channel.startPrompt(false);
      channel.play(second);
      channel.play(second);
    }
    this.feeding = setInterval(() => {
      for (const channel of this.prompts) channel.play(second);
    }, 1000);
  }

  /** Joins the legs in pairs. */
  bridge(): void {
    for (let n = 0; n + 1 < this.legs.length; n += 2) this.legs[n]!.bridge(this.legs[n + 1]!);
  }

  async close(): Promise<void> {
    if (this.feeding) clearInterval(this.feeding);
    await Promise.all([...this.legs, ...this.prompts].map((channel) => channel.close()));
    await this.thread.close();
  }
}
