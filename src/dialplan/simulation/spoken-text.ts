/**
 * A prompt's text as the caller would hear it: the same planning a call's synthesis does
 * (markup parsed, numbers, dates and money written out), then Swiss German rendered into the
 * prompt's dialect — without synthesising anything.
 */
import type { DialectRenderer } from '../../../engine/dialect/dialect-renderer.js';
import { planSynthesis } from '../../speech/synthesis-request.js';
import { prepareSpeech } from '../../speech/synthesis-service.js';
import type { PromptRequest } from '../steps/step-context.js';

/** The words of a prompt as spoken, passages and items joined by single spaces. */
export function spokenText(prompt: PromptRequest, renderer: DialectRenderer): string {
  const plan = planSynthesis(
    {
      text: prompt.text,
      voice: prompt.voice,
      language: prompt.language,
      ...(prompt.dialect !== undefined ? { dialect: prompt.dialect } : {}),
      ...(prompt.dialectText ? { dialect_text: true } : {}),
      model: 'swift',
      format: 'pcm16',
      sample_rate_hz: 8000,
    },
    false,
  );
  const document = prepareSpeech(plan.speech.document, renderer, undefined, { dialectText: plan.dialectText });
  return document.passages
    .flatMap((passage) => passage.items.map((item) => (item.type === 'text' ? item.text.trim() : '')))
    .filter((text) => text !== '')
    .join(' ');
}
