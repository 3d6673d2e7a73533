/**
 * The deployment lexicon (`lexicon.yaml` beside the dialplans, or the file
 * `SPRACHROHR_LEXICON_FILE` names): a hotline's own words and pronunciations for Swiss German
 * rendering. The JSON Schema here is what the loader checks the file against;
 * lexicon-loader.ts checks the rest (regions, pronunciations, entries given twice).
 */
import { Type, type Static } from '@sinclair/typebox';

/** Most entries one lexicon may hold. */
export const LEXICON_MAX_ENTRIES = 20_000;

const Form = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

export const LexiconEntrySchema = Type.Object(
  {
    german: Form('a word or phrase as written in Standard German (matched case-insensitively, as whole words)'),
    dialect: Type.Optional(Form('what it becomes in every Swiss German region')),
    regions: Type.Optional(
      Type.Record(Type.String(), Form('what it becomes in this region'), { description: 'what it becomes per region (de-CH dialect ids), over dialect' }),
    ),
    pronunciation: Type.Optional(
      Type.Object(
        {
          ipa: Type.String({
            minLength: 1,
            maxLength: 400,
            description: 'IPA over the Swiss phones, one word per spoken word, ˈ before the stressed syllable',
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type LexiconEntryFields = Static<typeof LexiconEntrySchema>;

export const LexiconFileSchema = Type.Object(
  {
    entries: Type.Array(Type.Unknown(), { maxItems: LEXICON_MAX_ENTRIES, description: 'the words and phrases' }),
  },
  { additionalProperties: false },
);
