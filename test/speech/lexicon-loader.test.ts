/**
 * The deployment lexicon file: a good one with each kind of entry, and each kind of mistake
 * reported with its file, line and column; where it is found; the dialplan loader leaves it alone.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDialplans } from '../../src/dialplan/dialplan-loader.js';
import { DialplanError } from '../../src/dialplan/yaml-file.js';
import { ipaWords } from '../../engine/dialect/deployment-lexicon.js';
import { checkLexicon, isLexiconFile, loadLexicon } from '../../src/speech/lexicon-loader.js';

const GOOD = `entries:
  - german: Stadtwerke        # a word for every region
    dialect: Stadtwärch
    pronunciation: { ipa: "/'ʃtatʋærχ/" }
  - german: Dübendorf         # a name: only how it is said
    pronunciation: { ipa: "ˈdyːbəndɔrf" }
  - german: Kundendienst      # per region
    dialect: Chundedienscht
    regions: { bern: Chundedienscht, wallis: Chundudienscht }
  - german: Wir haben heute geschlossen
    dialect: Mir händ hüt zue
`;

/** The message the lexicon's first problem gives. */
function problemOf(text: string): string {
  try {
    checkLexicon('lexicon.yaml', text);
  } catch (error) {
    if (error instanceof DialplanError) return error.message;
    throw error;
  }
  throw new Error('no problem found');
}

describe('deployment lexicon file', () => {
  it('takes words, names, per-region forms and phrases, with IPA in its usual notations', () => {
    const lexicon = checkLexicon('lexicon.yaml', GOOD);
    expect(lexicon.size).toBe(4);
    const [stadtwerke, duebendorf, kundendienst, phrase] = lexicon.entries;
    // ASCII stress, slashes and χ are written as the Swiss phones are (ˈ, x); v is ʋ.
    expect(stadtwerke).toMatchObject({ german: 'Stadtwerke', dialect: 'Stadtwärch', ipa: ['ˈʃtatʋærx'], where: 'lexicon.yaml:2:5' });
    expect(duebendorf).toMatchObject({ dialect: null, ipa: ['ˈdyːbəndɔrf'] });
    expect(kundendienst!.regions.get('wallis')).toBe('Chundudienscht');
    expect(phrase).toMatchObject({ german: 'Wir haben heute geschlossen', ipa: null });
    expect(lexicon.pronunciations('zurich')?.get('stadtwärch')).toBe('ˈʃtatʋærx');
    // A name is pronounced in hochdeutsch too; a dialect word is not.
    expect(lexicon.pronunciations('hochdeutsch')?.get('dübendorf')).toBe('ˈdyːbəndɔrf');
    expect(lexicon.pronunciations('hochdeutsch')?.get('stadtwärch')).toBeUndefined();
  });

  it('reads IPA notations as the Swiss phones: ASCII marks, g, tie bars, syllable dots, r and χ', () => {
    expect(ipaWords("[ˈɡruː.ə.tsi] 'ʀa:t͡s")).toEqual(['ˈɡruːətsi', 'ˈraːts']);
    expect(ipaWords('/gʁyəsəχ/')).toEqual(['ɡryəsəx']);
  });

  const bad: Array<[string, string, RegExp]> = [
    ['YAML syntax', 'entries:\n  - german: [a\n', /^lexicon\.yaml:3:1: /],
    ['not a mapping', '- german: a\n', /^lexicon\.yaml:1:1: a lexicon is a mapping with the list entries$/],
    ['an unknown top-level field', 'entries: []\nwords: []\n', /^lexicon\.yaml:2:8: unknown field "words"$/],
    ['an unknown entry field', 'entries:\n  - german: Stadtwerke\n    dialekt: Stadtwärch\n', /^lexicon\.yaml:3:14: unknown field "dialekt"$/],
    ['an entry that says nothing', 'entries:\n  - german: Stadtwerke\n', /^lexicon\.yaml:2:13: an entry needs dialect, regions or pronunciation/],
    [
      'German that is not whole words',
      'entries:\n  - german: "-werke"\n    dialect: wärch\n',
      /^lexicon\.yaml:2:13: german must begin and end with a letter or digit/,
    ],
    [
      'German given twice',
      'entries:\n  - german: Stadtwerke\n    dialect: a\n  - german: stadtwerke\n    dialect: b\n',
      /^lexicon\.yaml:4:13: "stadtwerke" is in the lexicon twice \(also at lexicon\.yaml:2:5\)$/,
    ],
    [
      'an unknown region',
      'entries:\n  - german: Stadtwerke\n    regions: { zueri: Stadtwärch }\n',
      /^lexicon\.yaml:3:23: de-CH has no dialect "zueri" \(it has standard, zurich, bern/,
    ],
    [
      'a form for hochdeutsch',
      'entries:\n  - german: Stadtwerke\n    regions: { hochdeutsch: Stadtwerk }\n',
      /^lexicon\.yaml:3:29: hochdeutsch keeps the German words/,
    ],
    ['a region form that is not text', 'entries:\n  - german: Stadtwerke\n    regions: { bern: [a] }\n', /^lexicon\.yaml:3:22: bern must be string$/],
    ['eSpeak phonemes', 'entries:\n  - german: Dübendorf\n    pronunciation: { espeak: "dy:b@ndOrf" }\n', /^lexicon\.yaml:3:30: pronunciation takes ipa only/],
    [
      'IPA outside the Swiss phones',
      'entries:\n  - german: Dübendorf\n    pronunciation:\n      ipa: ˈdyːbəndɔrç\n',
      /^lexicon\.yaml:4:12: ipa "ˈdyːbəndɔrç": "ç" is not one of the Swiss phones/,
    ],
    [
      'IPA with fewer words than the form',
      'entries:\n  - german: Hans Muster\n    pronunciation: { ipa: "ˈhans" }\n',
      /^lexicon\.yaml:3:27: ipa has 1 word but "Hans Muster" has 2/,
    ],
    [
      'a word pronounced two ways',
      'entries:\n  - german: Haus\n    dialect: Huus\n    pronunciation: { ipa: "ˈhuːs" }\n  - german: Häuschen\n    dialect: Huus\n    pronunciation: { ipa: "ˈhʊs" }\n',
      /^lexicon\.yaml:7:27: "Huus" is pronounced \/ˈhuːs\/ at lexicon\.yaml:2:5 and \/ˈhʊs\/ here$/,
    ],
  ];
  for (const [what, text, message] of bad) it(`refuses ${what} with its line and column`, () => expect(problemOf(text)).toMatch(message));
});

describe('where the lexicon is found', () => {
  it('is lexicon.yaml or lexicon.yml in the dialplan folder, or the file named; the dialplan loader leaves it alone', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lexicon-'));
    try {
      expect(await loadLexicon({ file: null, directory: dir })).toBeNull();
      await fs.writeFile(path.join(dir, 'lexicon.yml'), GOOD);
      await fs.writeFile(
        path.join(dir, 'a.yaml'),
        'name: a\nroutes:\n  - number: "1"\n    language: de-CH\n    voice: anna\n    steps:\n      - say: { text: Grüezi }\n',
      );
      const loaded = await loadLexicon({ file: null, directory: dir });
      expect(loaded?.file).toBe(path.join(dir, 'lexicon.yml'));
      expect(loaded?.lexicon.size).toBe(4);
      expect((await loadDialplans(dir)).routes.map((route) => route.file)).toEqual([path.join(dir, 'a.yaml')]);
      expect(isLexiconFile('/x/lexicon.yaml')).toBe(true);
      // A named file must be there.
      await expect(loadLexicon({ file: path.join(dir, 'words.yaml'), directory: dir })).rejects.toThrow(/words\.yaml:0:0: cannot be read: ENOENT/);
    } finally {
      await fs.rm(dir, { recursive: true });
    }
  });
});
