/**
 * A call in the terminal (`sprachrohr dialplan simulate`): the dialplan's steps run unchanged,
 * against a caller who is a stream of text lines — `dtmf 12#` presses keys, `silence` lets a
 * timeout pass, `hangup` hangs up, anything else is what the caller says — and what the gateway
 * does comes out as lines: `< TEXT` for each prompt as spoken (after dialect rendering),
 * `-> transfer TARGET`, `-> record`, `-> stream URL`, `-> hangup`. No phone, network or speech engine is needed.
 */
import type { Logger } from 'pino';
import type { DialectRenderer } from '../../../engine/dialect/dialect-renderer.js';
import type { LoadedRoute } from '../dialplan-loader.js';
import { takeKeys } from '../key-entry.js';
import { fillPlaceholders } from '../placeholders.js';
import type {
  CallVoice,
  ListenOutcome,
  ListenRequest,
  PromptRequest,
  RecordOutcome,
  SpokenPrompt,
  StepContext,
  StreamOutcome,
  StreamRequest,
  TransferOutcome,
  TransferRequest,
} from '../steps/step-context.js';
import { spokenText } from './spoken-text.js';

/** How a simulated transfer target answers. */
export type SimulatedTarget = 'answer' | 'busy' | 'no-answer' | 'refuse';

/** The simulated call's parameters. */
export interface SimulationOptions {
  readonly caller: string;
  readonly called: string;
  /** The clock the call sees (opening hours). */
  readonly at: Date;
  readonly target: SimulatedTarget;
  /** Signs a webhook bot's requests (the deployment's `SPRACHROHR_WEBHOOK_SECRET`). */
  readonly webhookSecret: string | null;
}

/** The caller's side: lines in, lines out. */
export interface SimulationConsole {
  /** The next line the caller types; null at the end of the input (the caller hangs up). */
  readLine(): Promise<string | null>;
  print(line: string): void;
}

/** A call whose caller is a {@link SimulationConsole}. */
export class SimulatedCall implements StepContext {
  readonly vars: Record<string, string>;
  voice: CallVoice;
  readonly callId = `simulated-${process.pid}-${Date.now()}`;
  readonly webhookSecret: string | null;
  /** Typed lines have no timing or confidence: a bot sees the transcript alone. */
  readonly lastHeard = { words: [], confidence: null } as const;
  private readonly controller = new AbortController();
  private typedAhead = '';
  private hungUpByCaller = false;
  private recordings = 0;

  constructor(
    readonly route: LoadedRoute,
    private readonly options: SimulationOptions,
    private readonly console: SimulationConsole,
    private readonly renderer: DialectRenderer,
    readonly logger: Logger,
  ) {
    this.webhookSecret = options.webhookSecret;
    this.vars = { heard: '', digits: '', caller: options.caller, called: options.called, language: route.language };
    this.voice = {
      language: route.language,
      voice: route.voice,
      ...(route.dialect !== undefined ? { dialect: route.dialect } : {}),
      ...(route.dialect_text ? { dialectText: true } : {}),
    };
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  now(): Date {
    return this.options.at;
  }

  fill(text: string): string {
    return fillPlaceholders(text, this.vars);
  }

  async answer(): Promise<void> {}

  async say(prompt: PromptRequest): Promise<SpokenPrompt> {
    this.console.print(`< ${spokenText(prompt, this.renderer)}`);
    return { interrupted: false };
  }

  async pause(): Promise<void> {}

  async listen(request: ListenRequest): Promise<ListenOutcome> {
    const nothing = { heard: '', digits: '', recogniserBusy: false, audioSeconds: 0 } as const;
    if (request.dtmf && this.typedAhead !== '') return this.takeTyped(request);
    const line = await this.callerLine();
    if (line === null) return { ...nothing, reason: 'ended' };
    if (line.kind === 'silence') return { ...nothing, reason: 'timeout' };
    if (line.kind === 'keys') {
      if (!request.dtmf) return { ...nothing, reason: 'timeout' };
      this.typedAhead += line.keys;
      return this.takeTyped(request);
    }
    if (!request.speech) return { ...nothing, reason: 'timeout' };
    return { ...nothing, heard: line.text, reason: 'speech' };
  }

  async record(request: { readonly finishOnKey: string }): Promise<RecordOutcome> {
    this.console.print('-> record');
    const line = await this.callerLine();
    if (line === null) return { recordingId: null, seconds: 0, endedBy: 'hangup' };
    if (line.kind === 'silence') return { recordingId: null, seconds: 0, endedBy: 'no_input' };
    if (line.kind === 'keys') return { recordingId: null, seconds: 0, endedBy: line.keys.startsWith(request.finishOnKey) ? 'key' : 'no_input' };
    this.recordings += 1;
    return { recordingId: `simulated-${this.recordings}`, seconds: 0, endedBy: 'silence' };
  }

  async transfer(request: TransferRequest): Promise<TransferOutcome> {
    this.console.print(`-> transfer ${request.target}${request.trunk === undefined ? '' : ` through the trunk ${request.trunk}`}`);
    switch (this.options.target) {
      case 'answer':
        this.controller.abort();
        // Through a trunk the gateway places the call itself: a bridge.
        return { result: request.mode === 'bridge' || request.trunk !== undefined ? 'bridged' : 'transferred', status: 200 };
      case 'busy':
        return { result: 'busy', status: 486 };
      case 'no-answer':
        return { result: 'no_answer', status: null };
      case 'refuse':
        return { result: 'refused', status: 603 };
    }
  }

  /**
   * A bot stream carries a phone call's audio (or its recognised speech) both ways: there is
   * none in a terminal, so the stream is shown and the dialplan goes on as if the bot had
   * closed it. Test a stream bot with a phone call (README, "Bots").
   */
  async stream(request: StreamRequest): Promise<StreamOutcome> {
    this.console.print(`-> stream ${request.url} (${request.mode}; not simulated: it needs a phone call)`);
    return { result: 'closed', reason: 'not simulated' };
  }

  async hangup(reason?: string): Promise<void> {
    if (this.signal.aborted) return;
    this.console.print(reason === undefined ? '-> hangup' : `-> hangup (${reason})`);
    this.controller.abort();
  }

  callerLeft(): boolean {
    return this.hungUpByCaller;
  }

  /** Keys typed ahead, taken as a listen would; an entry that is not complete ends as if the caller paused. */
  private takeTyped(request: ListenRequest): ListenOutcome {
    const taken = takeKeys(this.typedAhead, request.maxDigits, request.finishOnKey);
    this.typedAhead = taken.rest;
    return {
      heard: '',
      digits: taken.digits,
      reason: taken.finished ? 'finished' : taken.complete ? 'digits' : 'timeout',
      recogniserBusy: false,
      audioSeconds: 0,
    };
  }

  /** The caller's next line, read as keys, silence or speech; null when the caller hung up. */
  private async callerLine(): Promise<{ kind: 'keys'; keys: string } | { kind: 'silence' } | { kind: 'speech'; text: string } | null> {
    for (;;) {
      const line = await this.console.readLine();
      if (line === null || line.trim().toLowerCase() === 'hangup') {
        this.hungUpByCaller = true;
        this.controller.abort();
        return null;
      }
      const text = line.trim();
      if (text === '') continue;
      if (text.toLowerCase() === 'silence') return { kind: 'silence' };
      const keys = /^dtmf\s+([0-9*#A-Da-d]+)$/i.exec(text);
      if (keys) return { kind: 'keys', keys: keys[1]!.toUpperCase() };
      if (/^dtmf\b/i.test(text)) {
        this.console.print(`! "${text}" is not a key press: dtmf takes keys 0-9 * # A-D, e.g. dtmf 12#`);
        continue;
      }
      return { kind: 'speech', text };
    }
  }
}
