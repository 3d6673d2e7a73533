import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REGION_FILES, regionData } from '../../engine/dialect/region-data.js';
import { SWISS_CONSONANTS, SWISS_VOWELS, splitPhones } from '../../engine/dialect/swiss-phones.js';
import { pronounceText, pronounceWord } from '../../engine/dialect/swiss-pronunciation.js';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';

const REGIONS = Object.keys(REGION_FILES);

/** Each row: written word, IPA. One list per region; every rule of DIALECTS.md has a line. */
const WORD_LISTS: Record<string, Array<[string, string]>> = {
  standard: [
    // ch is always [x], never [ç]; chs is [ks].
    ['Chuchichäschtli', 'ˈxʊxɪxæʃtlɪ'],
    ['ich', 'ɪx'],
    ['Rächnig', 'ˈræxnɪɡ'],
    ['sächs', 'ˈsæks'],
    ['nächscht', 'ˈnæxʃt'],
    // ie, ue, üe are falling diphthongs.
    ['vier', 'ˈfiər'],
    ['guet', 'ˈɡuət'],
    ['müed', 'ˈmyəd'],
    ['Wiehnacht', 'ˈʋiənaxt'],
    // Doubled vowels and vowel + h are long; single vowels are short.
    ['Huus', 'ˈhuːs'],
    ['nüüni', 'ˈnyːnɪ'],
    ['Straass', 'ˈʃtraːs'],
    ['Jahr', 'ˈjaːr'],
    ['Mäntig', 'ˈmæntɪɡ'],
    // y and ii are [iː].
    ['Zyt', 'ˈtsiːt'],
    ['wiiter', 'ˈʋiːtər'],
    // ä is open; final and unstressed e is a schwa; r is spoken.
    ['Chäs', 'ˈxæs'],
    ['offe', 'ˈɔfə'],
    ['Chinder', 'ˈxɪndər'],
    ['Chundenummere', 'ˈxʊndənʊmərə'],
    // Swiss ei is [ei̯]; other diphthongs.
    ['zwei', 'ˈtsʋei̯'],
    ['zwäi', 'ˈtsʋæi̯'],
    ['Frau', 'ˈfrau̯'],
    ['öis', 'ˈøi̯s'],
    // Word-initial k is the affricate; inside a word k is plain; ck and gg are fortis k.
    ['Kafi', 'ˈkxafɪ'],
    ['Bank', 'ˈbaŋk'],
    ['Päckli', 'ˈpæklɪ'],
    ['zrugg', 'ˈtsrʊk'],
    // st and sp at the start of a word or stem; v is f; w is [ʋ]; z is [ts].
    ['Stund', 'ˈʃtʊnd'],
    ['spöter', 'ˈʃpœtər'],
    ['bestelle', 'bəˈʃtelə'],
    ['Bstellig', 'ˈbʃtelɪɡ'],
    ['vo', 'fɔ'],
    ['Wasser', 'ˈʋasər'],
    // Stress: first syllable; unstressed prefixes; stressed endings; stems are not prefixes.
    ['Verbindig', 'fərˈbɪndɪɡ'],
    ['Erfolg', 'ərˈfɔlɡ'],
    ['Erde', 'ˈerdə'],
    ['besser', 'ˈbesər'],
    ['behobe', 'bəˈhɔbə'],
    ['Entschuldigung', 'əntˈʃʊldɪɡʊŋ'],
    ['Information', 'ɪnfɔrmaˈtsjoːn'],
    ['informiere', 'ɪnfɔrˈmiərə'],
    ['Region', 'rəˈɡjoːn'],
    ['Qualität', 'kʋalɪˈtæt'],
    ['Momänt', 'mɔˈmænt'],
    ['Guethabe', 'ˈɡuəthabə'],
    // Function words are unstressed.
    ['isch', 'ɪʃ'],
    ['de', 'də'],
    ['und', 'ʊnd'],
    // The word list: loanwords and compounds.
    ['Telefon', 'ˈtelefɔn'],
    ['Minute', 'mɪˈnuːtə'],
    ['online', 'ˈɔnlai̯n'],
    ['E-Mail', 'ˈiːmei̯l'],
    ['Stärn-Taschte', 'ˈʃtærntaʃtə'],
    ["hätt's", 'ˈhæts'],
  ],
  zurich: [
    ['Straass', 'ˈʃtrɒːs'],
    ['Jahr', 'ˈjɒːr'],
    ['zahle', 'ˈtsɒːlə'],
    ['Kafi', 'ˈkxafɪ'],
    ['drücked', 'ˈdrʏkəd'],
  ],
  bern: [
    ['Wäut', 'ˈʋæu̯t'],
    ['zwöuf', 'ˈtsʋøu̯f'],
    ['viu', 'ˈfiu̯'],
    ['eufi', 'ˈɛu̯fɪ'],
    ['aui', 'ˈau̯ɪ'],
    ['louft', 'ˈlou̯ft'],
    ['Straass', 'ˈʃtraːs'],
    ['Chind', 'ˈxɪnd'],
  ],
  basel: [
    ['Kind', 'ˈkɪnd'],
    ['Kundedienscht', 'ˈkʊndədiənʃt'],
    ['nyyni', 'ˈniːnɪ'],
    ['Frangge', 'ˈfraŋɡə'],
  ],
  graubuenden: [
    ['Kind', 'ˈkɪnd'],
    ['Kafi', 'ˈkafɪ'],
  ],
  wallis: [
    // Full vowels in endings are not reduced: only e becomes a schwa.
    ['Fragä', 'ˈfraɡæ'],
    ['offu', 'ˈɔfʊ'],
    ['wartät', 'ˈʋartæt'],
    ['Kafi', 'ˈkxafɪ'],
  ],
  luzern: [
    ['esch', 'əʃ'],
    ['ned', 'ˈned'],
    ['Kafi', 'ˈkxafɪ'],
  ],
  aargau: [
    ['Kafi', 'ˈkxafɪ'],
    ['guet', 'ˈɡuət'],
  ],
  stgallen: [
    ['Kafi', 'ˈkxafɪ'],
    ['Chäs', 'ˈxæs'],
  ],
};

describe('Swiss German pronunciation: word lists per region', () => {
  it('has a word list for every region with data', () => {
    for (const region of REGIONS) expect(WORD_LISTS[region], region).toBeDefined();
  });

  for (const [region, list] of Object.entries(WORD_LISTS)) {
    it(`pronounces the ${region} word list`, () => {
      const said = list.map(([word]) => [word, pronounceWord(word, region)]);
      expect(said).toEqual(list);
    });
  }

  it('keeps region rules apart: Zürich and Bern long a, k in Basel and Graubünden', () => {
    expect(pronounceWord('Straass', 'zurich')).not.toBe(pronounceWord('Straass', 'bern'));
    expect(pronounceWord('Kafi', 'basel')).toBe('ˈkafɪ');
    expect(pronounceWord('Kafi', 'bern')).toBe('ˈkxafɪ');
  });

  it('leaves to the engine what the rules cannot read', () => {
    for (const word of ['SBB', 'SMS', 'info@example.ch', '079', 'A4', 'www.sbb.ch', 'naïve€']) expect(pronounceWord(word, 'zurich'), word).toBeNull();
    // A single capital letter is a word (the article S at a sentence start), not an abbreviation.
    expect(pronounceWord('S', 'zurich')).toBe('s');
  });
});

describe('Swiss German pronunciation of a text', () => {
  it('splits a text into spans that join back into it exactly', () => {
    const text = 'S Gschäft isch offe. Schriibed Sie an info@example.ch, SBB-Billett: 12 Franke!';
    const spans = pronounceText(text, 'zurich');
    expect(spans.map((span) => span.text).join('')).toBe(text);
    expect(spans.find((span) => span.text === 'S Gschäft')).toEqual({ text: 'S Gschäft', ipa: 'ˈsɡʃæft' });
    expect(spans.find((span) => span.text.includes('info@'))?.ipa ?? null).toBeNull();
    expect(spans.find((span) => span.text === 'offe')).toEqual({ text: 'offe', ipa: 'ˈɔfə' });
  });

  it('lets a vowelless article lean on the next word, with or without an apostrophe', () => {
    expect(pronounceText('d Frau', 'zurich')).toEqual([{ text: 'd Frau', ipa: 'ˈdfrau̯' }]);
    expect(pronounceText("d'Frau", 'zurich')).toEqual([{ text: "d'Frau", ipa: 'ˈdfrau̯' }]);
    expect(pronounceText('dr Maa', 'bern')).toEqual([{ text: 'dr Maa', ipa: 'ˈdrmaː' }]);
    // Before punctuation or a word the rules cannot read, it stays on its own.
    expect(pronounceText('d SBB', 'zurich')).toEqual([
      { text: 'd', ipa: 'd' },
      { text: ' SBB', ipa: null },
    ]);
  });

  it('reads every word of every reference rendering (no letter without a rule)', () => {
    const devset = JSON.parse(readFileSync(new URL('../bench/dialect/devset.json', import.meta.url), 'utf8')) as { sentences: Array<Record<string, string>> };
    for (const region of REGIONS) {
      for (const sentence of devset.sentences) {
        const reference = sentence[region];
        if (!reference) continue;
        for (const span of pronounceText(reference, region)) {
          const word = span.text.trim();
          if (/^[\p{L}'-]+$/u.test(word) && word !== word.toUpperCase()) expect(span.ipa, `${region}: ${word}`).not.toBeNull();
        }
      }
    }
  });

  it('is what the renderer gives for a rendered text, and nothing for Swiss Standard German', () => {
    const renderer = new SwissGermanRenderer();
    const rendered = renderer.render('Das Geschäft ist geöffnet.', 'bern');
    expect(renderer.pronounce(rendered, 'bern')).toEqual(pronounceText(rendered, 'bern'));
    expect(renderer.pronounce('Das Geschäft ist geöffnet.', 'hochdeutsch')).toBeNull();
    expect(renderer.pronounce('Grüezi', null)).toEqual(pronounceText('Grüezi', 'standard'));
  });
});

describe('pronunciation data', () => {
  it('writes every row with a source and only phones of the inventory', () => {
    for (const [region, file] of Object.entries(REGION_FILES)) {
      const sounds = file.sounds;
      if (!sounds) continue;
      expect(sounds.source.length, region).toBeGreaterThan(10);
      for (const [letters, ipa, source] of [...sounds.graphemes, ...sounds.words]) {
        expect(source.trim().length, `${region}: ${letters}`).toBeGreaterThan(0);
        expect(splitPhones(ipa), `${region}: ${letters} → ${ipa}`).not.toBeNull();
      }
      for (const [word, source] of [
        ...(sounds.stressedEndings ?? []),
        ...(sounds.unstressedPrefixes ?? []),
        ...(sounds.unstressedWords ?? []),
        ...(sounds.proclitics ?? []),
      ]) {
        expect(source.trim().length, `${region}: ${word}`).toBeGreaterThan(0);
      }
    }
  });

  it('lets a region override single letter groups of standard and inherit the rest', () => {
    expect(regionData('zurich').sounds.graphemes.get('aa')).toBe('ɒː');
    expect(regionData('bern').sounds.graphemes.get('aa')).toBe('aː');
    expect(regionData('aargau').sounds.graphemes.get('^k')).toBe('kx');
    expect(regionData('basel').sounds.graphemes.get('^k')).toBe('k');
  });

  it('splits IPA into inventory phones, longest symbol first', () => {
    expect(splitPhones('ˈtsʋei̯')).toEqual(['ˈ', 'ts', 'ʋ', 'ei̯']);
    expect(splitPhones('ˈkxiə')).toEqual(['ˈ', 'kx', 'iə']);
    expect(splitPhones('ˈθɪŋ')).toBeNull();
    expect(new Set([...SWISS_VOWELS, ...SWISS_CONSONANTS]).size).toBe(SWISS_VOWELS.length + SWISS_CONSONANTS.length);
  });
});
