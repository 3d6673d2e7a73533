/**
 * baresip (Debian package `baresip-core`, 1.0) as a real user agent for the telephony tests: a
 * config folder of its own in a temporary folder (`config`, `accounts`, the `sndfile` dumps),
 * run headless with commands on stdin (`/dial`, `/hangup`, `/quit`), its states awaited in its
 * output. Audio comes from a WAV file (`aufile`), nothing is played (`aubridge`), and `sndfile`
 * records what went out and what came in, decoded, for each call.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWav, wavHeader } from '../../src/audio/wav.js';

/** The baresip command. */
export const BARESIP = process.env.BARESIP_BIN ?? 'baresip';

/** Where Debian puts baresip's modules. */
export const BARESIP_MODULES = process.env.BARESIP_MODULES ?? '/usr/lib/baresip/modules';

/** Checks that baresip is installed and answers with its version (e.g. `1.0.0`). */
export async function requireBaresip(): Promise<{ version: string }> {
  const output = await new Promise<string>((resolve, reject) => {
    // `-h` prints the banner and the usage, then exits (with status 1 in 1.0).
    execFile(BARESIP, ['-h'], { timeout: 5000 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT')
        reject(new Error(`${BARESIP} is not installed: apt-get install baresip-core (see .ci/system-deps)`));
      else resolve(`${stdout}${stderr}`);
    });
  });
  const match = /baresip v(\d+\.\d+\.\d+)/.exec(output);
  if (!match) throw new Error(`${BARESIP} -h did not print a version:\n${output}`);
  return { version: match[1]! };
}

export interface BaresipOptions {
  /** The WAV file sent as the caller's audio: PCM16 at the codec's rate (48000 for Opus), mono. */
  readonly audioSource: string;
  /** The account's codecs (`audio_codecs`), e.g. `opus/48000/2` to offer only Opus. */
  readonly codecs: string;
  /** The SIP user of the account (`sip:<user>@127.0.0.1`). */
  readonly user?: string;
  /** The range baresip takes its RTP ports from. */
  readonly rtpPorts: { readonly min: number; readonly max: number };
  /** Further `config` lines. */
  readonly extraConfig?: readonly string[];
}

/** One SIP message from baresip's trace (`-s`). */
export interface TracedSipMessage {
  /** Sender and receiver as `address:port`. */
  readonly from: string;
  readonly to: string;
  /** The request or status line. */
  readonly startLine: string;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

/** A recording of `sndfile`: PCM16 of the first channel. */
export interface Recording {
  readonly path: string;
  readonly sampleRateHz: number;
  readonly channels: number;
  readonly pcm: Int16Array;
  readonly seconds: number;
}

/** What `sndfile` recorded of a call: what baresip sent (before encoding) and received (decoded). */
export interface CallRecordings {
  readonly sent: Recording;
  readonly received: Recording;
}

const ANSI = /\x1b\[[0-9;]*m/g;

/** A running baresip. */
export class Baresip {
  private text = '';
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private hasExited = false;

  private constructor(
    /** The config folder (`-f`). */
    readonly dir: string,
    /** Where `sndfile` writes (`snd_path`). */
    readonly soundDir: string,
    private readonly child: ChildProcessWithoutNullStreams,
  ) {
    const take = (chunk: Buffer): void => {
      this.text += chunk.toString('utf8').replace(ANSI, '');
      for (const waiter of [...this.waiters]) waiter();
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    this.exited = new Promise((resolve) => {
      child.on('close', (code, signal) => {
        this.hasExited = true;
        for (const waiter of [...this.waiters]) waiter();
        resolve({ code, signal });
      });
    });
    // A write after baresip ended must not crash the test run.
    child.stdin.on('error', () => undefined);
  }

  /** Writes the config folder, starts baresip, and waits until it is ready. */
  static async start(options: BaresipOptions): Promise<Baresip> {
    const dir = await mkdtemp(join(tmpdir(), 'baresip-'));
    const soundDir = join(dir, 'sound');
    await mkdir(soundDir);
    const config = [
      'poll_method epoll',
      // SIP only over UDP on the loopback; port 0: a free one.
      'sip_listen 127.0.0.1:0',
      'net_interface 127.0.0.1',
      'call_local_timeout 30',
      'call_max_calls 1',
      `audio_source aufile,${options.audioSource}`,
      'audio_player aubridge,nil',
      'audio_alert aubridge,nil',
      // The file and the player are mono; baresip converts to and from the codec's channels.
      'ausrc_channels 1',
      'auplay_channels 1',
      'ausrc_format s16',
      'auplay_format s16',
      'auenc_format s16',
      'audec_format s16',
      'audio_buffer 20-160',
      `rtp_ports ${options.rtpPorts.min}-${options.rtpPorts.max}`,
      'rtcp_mux no',
      // No jitter buffer: baresip's gives out a frame only when another arrives, so the end of
      // the last prompt of a call would stay in it and never reach the recording.
      'jitter_buffer_delay 0-0',
      `module_path ${BARESIP_MODULES}`,
      'module stdio.so',
      'module opus.so',
      'module g711.so',
      'module sndfile.so',
      'module aufile.so',
      'module aubridge.so',
      'module_tmp account.so',
      'module_app menu.so',
      `snd_path ${soundDir}`,
      'ringback_disabled yes',
      ...(options.extraConfig ?? []),
    ];
    await writeFile(join(dir, 'config'), `${config.join('\n')}\n`);
    await writeFile(join(dir, 'accounts'), `<sip:${options.user ?? 'caller'}@127.0.0.1>;regint=0;audio_codecs=${options.codecs}\n`);
    // -s: the SIP trace, for the messages the peer sent.
    const child = spawn(BARESIP, ['-s', '-f', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
    const baresip = new Baresip(dir, soundDir, child);
    try {
      await baresip.waitFor(/baresip is ready\./, 10_000);
    } catch (error) {
      await baresip.close();
      throw error;
    }
    return baresip;
  }

  /** Everything baresip printed so far (colours removed). */
  get output(): string {
    return this.text;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Types a command (`/dial sip:…`, `/hangup`, `/quit`). */
  command(line: string): void {
    if (!this.hasExited) this.child.stdin.write(`${line}\n`);
  }

  /**
   * Resolves with the first match of `pattern` in the output from `from` (a character offset)
   * on; rejects after `timeoutMs`, or when baresip ends first, with the output's tail.
   */
  waitFor(pattern: RegExp, timeoutMs: number, from = 0): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const match = pattern.exec(this.text.slice(from));
        if (match) return finish(() => resolve(match));
        if (this.hasExited) finish(() => reject(new Error(`baresip ended before ${pattern}:\n${this.tail()}`)));
      };
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        settle();
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`baresip did not print ${pattern} in ${timeoutMs} ms:\n${this.tail()}`))), timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Calls `uri` and waits until the call is established; rejects when it is refused or closed. */
  async dial(uri: string, timeoutMs = 10_000): Promise<void> {
    const from = this.text.length;
    this.command(`/dial ${uri}`);
    const match = await this.waitFor(/Call established|session closed: .*|call: could not .*/, timeoutMs, from);
    if (match[0] !== 'Call established') throw new Error(`the call to ${uri} failed (${match[0]}):\n${this.tail()}`);
  }

  /** The SIP messages of the trace, in order. */
  sipMessages(): TracedSipMessage[] {
    const messages: TracedSipMessage[] = [];
    // Each traced message: a line `#`, a line `UDP <from> -> <to>`, then the message.
    for (const chunk of this.text.split(/^#\r?\n/m).slice(1)) {
      const route = /^(?:UDP|TCP|TLS) (\S+) -> (\S+)\r?\n/.exec(chunk);
      if (!route) continue;
      const message = chunk.slice(route[0].length);
      const split = /\r?\n\r?\n/.exec(message);
      const head = split ? message.slice(0, split.index) : message;
      const lines = head.split(/\r?\n/);
      const headers = new Map<string, string>();
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      const length = Number(headers.get('content-length') ?? 0);
      const body = split ? message.slice(split.index + split[0].length, split.index + split[0].length + length) : '';
      messages.push({ from: route[1]!, to: route[2]!, startLine: lines[0]!, headers, body });
    }
    return messages;
  }

  /** Reads what `sndfile` recorded of the (one) call; call after the call has ended. */
  async recordings(): Promise<CallRecordings> {
    const files = await readdir(this.soundDir);
    const find = (suffix: string): string => {
      const matching = files.filter((file) => file.endsWith(suffix)).sort();
      if (matching.length !== 1) throw new Error(`expected one *${suffix} in ${this.soundDir}, found ${matching.join(', ') || 'none'}`);
      return join(this.soundDir, matching[0]!);
    };
    return { sent: await readRecording(find('-enc.wav')), received: await readRecording(find('-dec.wav')) };
  }

  /** Asks baresip to quit and waits for it to end; kills it if it has not within `graceMs`. */
  async quit(graceMs = 3000): Promise<void> {
    if (this.hasExited) return;
    this.command('/quit');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Quits baresip and removes its folder with the recordings. */
  async close(graceMs = 3000): Promise<void> {
    await this.quit(graceMs);
    await rm(this.dir, { recursive: true, force: true });
  }

  /** The last lines of the output, for error messages. */
  tail(lines = 40): string {
    return this.text.split('\n').slice(-lines).join('\n');
  }
}

/** A `sndfile` WAV: its first channel as PCM16. */
export async function readRecording(path: string): Promise<Recording> {
  const bytes = await readFile(path);
  const info = parseWav(bytes);
  if (info.encoding !== 'pcm' || info.bitsPerSample !== 16) throw new Error(`${path}: expected 16-bit PCM, got ${info.bitsPerSample}-bit ${info.encoding}`);
  const frames = info.dataBytes / (2 * info.channels);
  const pcm = new Int16Array(frames);
  for (let i = 0; i < frames; i++) pcm[i] = bytes.readInt16LE(info.dataOffset + i * 2 * info.channels);
  return { path, sampleRateHz: info.sampleRateHz, channels: info.channels, pcm, seconds: frames / info.sampleRateHz };
}

/** Writes mono PCM16 as a WAV file (for `aufile`). */
export async function writeWav(path: string, pcm: Int16Array, sampleRateHz: number): Promise<void> {
  await writeFile(path, Buffer.concat([wavHeader(sampleRateHz, pcm.byteLength), Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)]));
}
