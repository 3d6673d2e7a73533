import type { CallVoice, StepContext } from './step-context.js';

/**
 * The voice of a prompt: the step's own fields over the call's voice. A step that names another
 * language does not inherit the call's dialect, which belongs to the call's language, nor its
 * `dialect_text`.
 */
export function promptVoice(
  context: StepContext,
  fields: { readonly voice?: string; readonly language?: string; readonly dialect?: string; readonly dialect_text?: boolean },
): CallVoice {
  const language = fields.language ?? context.voice.language;
  const dialect = fields.dialect ?? (fields.language === undefined ? context.voice.dialect : undefined);
  const dialectText = fields.dialect_text ?? (fields.language === undefined ? context.voice.dialectText : undefined);
  return { language, voice: fields.voice ?? context.voice.voice, ...(dialect !== undefined ? { dialect } : {}), ...(dialectText ? { dialectText } : {}) };
}
