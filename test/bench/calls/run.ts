/** The whole call benchmark: starts the gateways, measures each part the settings ask for, stops them. */
import { requireSipp } from '../../helpers/sipp.js';
import { benchBargeIn, type BargeInFigures } from './barge-in.js';
import { callerSpeech } from './caller-speech.js';
import { liveDialplan, MENU_DIALPLAN, SYNTHETIC_DIALPLAN } from './dialplans.js';
import { startGateway, stopGateway } from './gateway-process.js';
import { loadRun, type LoadFigures } from './load.js';
import { benchMediaStream, mediaStreamDialplan, startEchoBot, type MediaStreamFigures } from './media-stream.js';
import { benchMenuKeys, type MenuKeyFigures } from './menu-keys.js';
import { benchWebhookTurns, startBenchBot, webhookDialplan, type WebhookTurnFigures } from './webhook-turns.js';
import { callsBenchSettings, type CallsBenchSettings } from './settings.js';
import { benchTurns, type TurnFigures } from './turns.js';

/** The call figures; a part the settings left out is null. */
export interface CallsFigures {
  readonly settings: CallsBenchSettings;
  readonly load: LoadFigures | null;
  readonly bargeIn: BargeInFigures | null;
  readonly turn: TurnFigures | null;
  readonly keys: MenuKeyFigures | null;
  readonly webhook: WebhookTurnFigures | null;
  readonly mediaStream: MediaStreamFigures | null;
}

/** Starts the gateways, measures, stops them. */
export async function benchCalls(settings: CallsBenchSettings = callsBenchSettings()): Promise<CallsFigures> {
  const speech = await callerSpeech();
  let load: LoadFigures | null = null;
  let bargeIn: BargeInFigures | null = null;
  let turn: TurnFigures | null = null;
  let keys: MenuKeyFigures | null = null;
  let webhook: WebhookTurnFigures | null = null;
  let mediaStream: MediaStreamFigures | null = null;
  if (settings.calls > 0 || settings.bargeIns > 0) {
    const gateway = await startGateway(SYNTHETIC_DIALPLAN, {
      SPRACHROHR_TTS_ENGINE: 'none',
      SPRACHROHR_STT_ENGINE: 'none',
      SPRACHROHR_SIP_MAX_CALLS: String(Math.max(200, settings.calls + 10)),
      SPRACHROHR_SIP_MAX_CALLS_PER_SOURCE: String(Math.max(200, settings.calls + 10)),
    });
    try {
      if (settings.calls > 0) {
        await requireSipp();
        load = await loadRun(gateway, speech, settings);
      }
      if (settings.bargeIns > 0) bargeIn = await benchBargeIn(gateway, speech, settings.bargeIns);
    } finally {
      await stopGateway(gateway);
    }
  }
  if (settings.turns > 0) {
    const gateway = await startGateway(liveDialplan(settings.endSilenceSet ? settings.endSilenceMs : null), {
      SPRACHROHR_TTS_ENGINE: 'espeak',
      SPRACHROHR_STT_ENGINE: 'pocketsphinx',
    });
    try {
      turn = await benchTurns(gateway, speech, settings.turns, settings.endSilenceMs);
    } finally {
      await stopGateway(gateway);
    }
  }
  if (settings.keys > 0) {
    const gateway = await startGateway(MENU_DIALPLAN, {
      SPRACHROHR_TTS_ENGINE: 'espeak',
      SPRACHROHR_STT_ENGINE: 'none',
      SPRACHROHR_SIP_MAX_CALLS: String(settings.keysBackground + 10),
      SPRACHROHR_SIP_MAX_CALLS_PER_SOURCE: String(settings.keysBackground + 10),
    });
    try {
      keys = await benchMenuKeys(gateway, settings.keys, settings.keysBackground);
    } finally {
      await stopGateway(gateway);
    }
  }
  if (settings.webhookTurns > 0) {
    const bot = await startBenchBot(settings.webhookBotDelayMs);
    try {
      const gateway = await startGateway(webhookDialplan(bot.url), { SPRACHROHR_TTS_ENGINE: 'espeak', SPRACHROHR_STT_ENGINE: 'none' });
      try {
        webhook = await benchWebhookTurns(gateway, bot, settings.webhookTurns);
      } finally {
        await stopGateway(gateway);
      }
    } finally {
      await new Promise((resolve) => bot.server.close(resolve));
    }
  }
  if (settings.mediaStreamCalls > 0) {
    await requireSipp();
    const bot = await startEchoBot();
    try {
      const gateway = await startGateway(mediaStreamDialplan(bot.url), {
        SPRACHROHR_TTS_ENGINE: 'none',
        SPRACHROHR_STT_ENGINE: 'none',
        SPRACHROHR_SIP_MAX_CALLS: String(Math.max(200, settings.mediaStreamCalls + 10)),
        SPRACHROHR_SIP_MAX_CALLS_PER_SOURCE: String(Math.max(200, settings.mediaStreamCalls + 10)),
      });
      try {
        mediaStream = await benchMediaStream(gateway, bot, speech, settings.mediaStreamCalls, settings.mediaStreamRate, settings.seconds);
      } finally {
        await stopGateway(gateway);
      }
    } finally {
      await bot.close();
    }
  }
  return { settings, load, bargeIn, turn, keys, webhook, mediaStream };
}
