import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SWISS_CONSONANTS, SWISS_VOWELS, splitPhones } from '../../engine/dialect/swiss-phones.js';
import { findEspeakLibrary } from '../../engine/espeak/espeak-native.js';
import { ESPEAK_GERMAN_MNEMONICS, espeakPhonemes, parseMnemonics } from '../../engine/espeak/espeak-phonemes.js';

/** eSpeak's `phINVALID`: a table entry the language does not define. */
const PH_INVALID = 15;

/**
 * The phoneme mnemonics of eSpeak's German table and the tables it includes, read from the
 * `phontab` file the installed eSpeak NG loads (Debian keeps its data beside the library;
 * layout of espeak-ng's `LoadPhData`).
 */
function germanMnemonicsFromPhontab(): Set<string> {
  const data = readFileSync(path.join(path.dirname(findEspeakLibrary(undefined)), 'espeak-ng-data', 'phontab'));
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const tables: Array<{ name: string; includes: number; mnemonics: string[] }> = [];
  let at = 4;
  for (let table = 0; table < view.getInt32(0, true); table += 1) {
    const count = data[at]!;
    const includes = data[at + 1]!;
    const name = new TextDecoder().decode(data.subarray(at + 4, at + 36)).replace(/\0.*$/s, '');
    at += 36;
    const mnemonics: string[] = [];
    for (let entry = 0; entry < count; entry += 1) {
      const packed = view.getUint32(at + entry * 16, true);
      const type = data[at + entry * 16 + 11]!;
      const text = [0, 1, 2, 3]
        .map((byte) => (packed >> (8 * byte)) & 0xff)
        .filter((code) => code !== 0)
        .map((code) => String.fromCharCode(code))
        .join('');
      // Printable mnemonics only (the table holds one internal control entry).
      if (text !== '' && type !== PH_INVALID && /^[\x21-\x7e]+$/.test(text)) mnemonics.push(text);
    }
    at += count * 16;
    tables.push({ name, includes, mnemonics });
  }
  const found = new Set<string>();
  let table = tables.find((candidate) => candidate.name === 'de');
  while (table) {
    for (const mnemonic of table.mnemonics) found.add(mnemonic);
    table = table.includes > 0 ? tables[table.includes - 1] : undefined;
  }
  return found;
}

describe('Swiss German phones as eSpeak phoneme input', () => {
  it('knows exactly the mnemonics of the German table in the installed eSpeak data', () => {
    const fromData = germanMnemonicsFromPhontab();
    expect([...ESPEAK_GERMAN_MNEMONICS].sort()).toEqual([...fromData].sort());
  });

  const phones = [...SWISS_VOWELS, ...SWISS_CONSONANTS];

  it('writes every phone of the inventory with mnemonics the German table has', () => {
    for (const phone of phones) {
      const mnemonics = espeakPhonemes(phone);
      expect(mnemonics, phone).not.toBeNull();
      for (const mnemonic of parseMnemonics(mnemonics!)) expect(ESPEAK_GERMAN_MNEMONICS.has(mnemonic), `${phone} → ${mnemonic}`).toBe(true);
    }
  });

  it('never lets two phones fuse into another mnemonic, stressed or not', () => {
    for (const first of phones) {
      for (const second of phones) {
        // Pairs that IPA itself reads as one phone (i + ə is the diphthong iə) cannot occur.
        if (splitPhones(`${first}${second}`)!.length !== 2) continue;
        for (const ipa of [`${first}${second}`, `ˈ${first}${second}`, `${first}ˈ${second}`]) {
          const alone = [...parseMnemonics(espeakPhonemes(first)!), ...parseMnemonics(espeakPhonemes(second)!)];
          const together = parseMnemonics(espeakPhonemes(ipa)!).filter((mnemonic) => mnemonic !== "'");
          expect(together, `${ipa} → ${espeakPhonemes(ipa)}`).toEqual(alone);
        }
      }
    }
  });

  it('writes words as eSpeak reads them, the stress right before the stressed vowel', () => {
    expect(espeakPhonemes('ˈxʊxɪxæʃtlɪ')).toBe("x'UxIxEStlI");
    expect(espeakPhonemes('ˈɡuət')).toBe("g'URt");
    expect(espeakPhonemes('ˈʋʊrʃt')).toBe("v'U|RSt");
    expect(espeakPhonemes('ˈtsʋei̯')).toBe("tsv'EI");
    expect(espeakPhonemes('ˈkxafɪ')).toBe("kx'afI");
    expect(espeakPhonemes('ˈθɪŋ')).toBeNull();
  });

  it('marks emphasis on the stressed vowel', () => {
    expect(espeakPhonemes('ˈhuːs', 'strong')).toBe("h'!u::s");
    expect(espeakPhonemes('ˈhuːs', 'moderate')).toBe("h'!u:s");
    expect(espeakPhonemes('ˈhuːs', 'reduced')).toBe('h,u:s');
    expect(espeakPhonemes('ˈhuːs', 'none')).toBe("h'u:s");
  });
});
