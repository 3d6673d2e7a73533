import type { CallVoice, StepContext } from './step-context.js';

/**
 * The voice of a prompt: the step's own fields over the call's voice. A step that names another
 * language does not inherit the call's dialect, which belongs to the call's language.
 */
export function promptVoice(context: StepContext, fields: { readonly voice?: string; readonly language?: string; readonly dialect?: string }): CallVoice {
  const language = fields.language ?? context.voice.language;
  const dialect = fields.dialect ?? (fields.language === undefined ? context.voice.dialect : undefined);
  return { language, voice: fields.voice ?? context.voice.voice, ...(dialect !== undefined ? { dialect } : {}) };
}
