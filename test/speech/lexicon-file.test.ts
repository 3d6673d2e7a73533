/**
 * The lexicon's hot reload: a changed lexicon reaches the renderer for the renderings after
 * it; a bad one is refused with its FILE:LINE:COLUMN in the log and the one before stays; a
 * removed one leaves the built-in data alone.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { LexiconFile } from '../../src/speech/lexicon-file.js';
import { capturedLogger } from '../helpers/captured-logger.js';

const lexicon = (dialect: string) => `entries:\n  - german: Stadtwerke\n    dialect: ${dialect}\n`;

/** Waits until the file has reloaded `count` times in all. */
async function reloaded(file: LexiconFile, count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (file.reloads < count) {
    if (Date.now() > deadline) throw new Error(`no reload (${file.reloads} of ${count})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('lexicon hot reload', () => {
  const opened: LexiconFile[] = [];
  const folders: string[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((file) => file.close()));
    await Promise.all(folders.splice(0).map((dir) => fs.rm(dir, { recursive: true })));
  });

  it('takes a changed lexicon, refuses a bad one and keeps the one before, and lets a removed one go', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lexicon-reload-'));
    folders.push(dir);
    const renderer = new SwissGermanRenderer();
    const { logger, logs } = capturedLogger();
    const file = await LexiconFile.open({ file: null, directory: dir }, renderer, logger);
    opened.push(file);
    file.watch();
    expect(file.file).toBeNull();
    expect(renderer.render('Stadtwerke', 'zurich')).toBe('Stadtwerke');

    // Added beside the dialplans while running.
    await fs.writeFile(path.join(dir, 'lexicon.yaml'), lexicon('Stadtwärch'));
    await reloaded(file, 1);
    expect(renderer.render('Die Stadtwerke', 'zurich')).toBe('D Stadtwärch');

    await fs.writeFile(path.join(dir, 'lexicon.yaml'), lexicon('Wärch'));
    await reloaded(file, 2);
    expect(renderer.render('Stadtwerke', 'zurich')).toBe('Wärch');

    // A dialplan changing beside it is no reason to reload the lexicon.
    await fs.writeFile(path.join(dir, 'a.yaml'), 'name: a\n');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(file.reloads).toBe(2);

    await fs.writeFile(path.join(dir, 'lexicon.yaml'), `${lexicon('Wärch')}    regions: { zueri: x }\n`);
    await reloaded(file, 3);
    expect(renderer.render('Stadtwerke', 'zurich')).toBe('Wärch');
    const refusal = logs.find((line) => String(line['msg']).startsWith('lexicon refused'));
    expect(refusal?.['msg']).toMatch(/lexicon\.yaml:4:23: de-CH has no dialect "zueri"/);

    await fs.rm(path.join(dir, 'lexicon.yaml'));
    await reloaded(file, 4);
    expect(renderer.render('Stadtwerke', 'zurich')).toBe('Stadtwerke');
    expect(file.file).toBeNull();
  });

  it('follows the file SPRACHROHR_LEXICON_FILE names, wherever it is', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lexicon-named-'));
    folders.push(dir);
    const named = path.join(dir, 'words.yml');
    await fs.writeFile(named, lexicon('Stadtwärch'));
    const renderer = new SwissGermanRenderer();
    const file = await LexiconFile.open({ file: named, directory: '/nonexistent' }, renderer, capturedLogger().logger);
    opened.push(file);
    file.watch();
    expect(renderer.render('Stadtwerke', 'bern')).toBe('Stadtwärch');
    await fs.writeFile(named, lexicon('Wärch'));
    await reloaded(file, 1);
    expect(renderer.render('Stadtwerke', 'bern')).toBe('Wärch');
  });
});
