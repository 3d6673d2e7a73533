import { DIALPLAN_DEFAULTS } from '../dialplan-defaults.js';
import { promptVoice } from './prompt-voice.js';
import { saysWords, wordsFor } from './spoken-words.js';
import { goOn, type ListenOutcome, type StepContext, type StepOf, type StepOutcome } from './step-context.js';
import { withRetries } from './with-retries.js';

type MenuOption = StepOf<'menu'>['menu']['options'][number];

/** The option a caller chose by key or by word, if any. */
export function chosenOption(options: readonly MenuOption[], heard: ListenOutcome, language: string): MenuOption | null {
  if (heard.digits !== '') return options.find((option) => option.key === heard.digits[0]) ?? null;
  if (heard.heard === '') return null;
  return options.find((option) => wordsFor(option.words, language).some((word) => saysWords(heard.heard, word))) ?? null;
}

/**
 * `menu`: says the menu (the caller may answer during it: barge-in), then takes one key or a
 * spoken word; an option sends the call to its step and sets `{{choice}}` (its key, else its
 * first word). No input or no match: the "sorry" prompt and another try, up to `retries`; then
 * the `fallback` step.
 */
export async function runMenu(step: StepOf<'menu'>, context: StepContext): Promise<StepOutcome> {
  const menu = step.menu;
  const voice = promptVoice(context, menu);
  const vocabulary = menu.options.flatMap((option) => wordsFor(option.words, voice.language));
  const result = await withRetries<MenuOption>(context, voice, menu, DIALPLAN_DEFAULTS.menu.retries, async () => {
    await context.say({ text: context.fill(menu.prompt), ...voice, bargeIn: true });
    if (context.signal.aborted) return { ended: true };
    const heard = await context.listen({
      speech: vocabulary.length > 0,
      dtmf: true,
      language: voice.language,
      vocabulary,
      timeoutMs: menu.timeout_ms ?? DIALPLAN_DEFAULTS.menu.timeout_ms,
      maxMs: DIALPLAN_DEFAULTS.listen.max_ms,
      maxDigits: 1,
    });
    if (heard.reason === 'ended') return { ended: true };
    context.vars['heard'] = heard.heard || heard.digits;
    context.vars['digits'] = heard.digits;
    const option = chosenOption(menu.options, heard, voice.language);
    context.logger.info({ heard: heard.heard, digits: heard.digits, chose: option?.goto ?? null }, 'menu');
    if (option) return { got: option };
    return { miss: heard.heard === '' && heard.digits === '' ? 'no_input' : 'no_match' };
  });
  if (result === 'ended') return { next: 'end' };
  if (result === 'exhausted') {
    context.vars['choice'] = '';
    return goOn(menu.fallback);
  }
  context.vars['choice'] = result.got.key ?? wordsFor(result.got.words, voice.language)[0] ?? '';
  return { next: 'goto', target: result.got.goto };
}
