/**
 * Hot reload: a changed or added dialplan takes effect for new calls; a bad one is refused with
 * its FILE:LINE:COLUMN message in the log, and the version before stays.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DialplanLibrary } from '../../src/dialplan/dialplan-library.js';
import { capturedLogger } from '../helpers/captured-logger.js';

const route = (number: string, text: string) =>
  `name: n${number}\nroutes:\n  - number: "${number}"\n    language: en\n    voice: anna\n    steps:\n      - say: { text: ${text} }\n`;

/** Waits until the library has reloaded `count` times in all. */
async function reloaded(library: DialplanLibrary, count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (library.reloads < count) {
    if (Date.now() > deadline) throw new Error(`no reload (${library.reloads} of ${count})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('dialplan hot reload', () => {
  const opened: DialplanLibrary[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((library) => library.close()));
  });

  it('takes a changed and an added file, refuses a bad one and keeps the version before', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dialplans-reload-'));
    await fs.writeFile(path.join(dir, 'a.yaml'), route('100', 'first'));
    const { logger, logs } = capturedLogger();
    const library = await DialplanLibrary.open(dir, logger);
    opened.push(library);
    library.watch();
    const textOf = (number: string) => {
      const step = library.current.route(number)?.steps[0];
      return step && 'say' in step ? step.say.text : null;
    };
    expect(textOf('100')).toBe('first');

    await fs.writeFile(path.join(dir, 'a.yaml'), route('100', 'second'));
    await reloaded(library, 1);
    expect(textOf('100')).toBe('second');

    await fs.writeFile(path.join(dir, 'b.yml'), route('200', 'added'));
    await reloaded(library, 2);
    expect(textOf('200')).toBe('added');

    await fs.writeFile(path.join(dir, 'a.yaml'), route('100', 'third').replace('voice: anna', 'voice: nobody'));
    await reloaded(library, 3);
    expect(textOf('100')).toBe('second');
    const refusal = logs.find((line) => String(line['msg']).startsWith('dialplan refused'));
    expect(refusal?.['msg']).toMatch(/a\.yaml:5:12: unknown voice "nobody"/);

    await fs.rm(path.join(dir, 'b.yml'));
    await fs.writeFile(path.join(dir, 'a.yaml'), route('100', 'fourth'));
    await reloaded(library, 4);
    expect(textOf('100')).toBe('fourth');
    expect(library.current.route('200')).toBeNull();
    await fs.rm(dir, { recursive: true });
  });
});
