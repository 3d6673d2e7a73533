/** Messages of one turn of the event loop go to the other thread as one. */
import { describe, expect, it } from 'vitest';
import { MessageBatch } from '../../../src/telephony/media/message-batch.js';

describe('MessageBatch', () => {
  it('posts everything sent in one task as one array, after the task', async () => {
    const posted: number[][] = [];
    const batch = new MessageBatch<number>({ postMessage: (messages) => posted.push(messages) });
    batch.send(1);
    batch.send(2);
    batch.send(3);
    expect(posted).toEqual([]);
    await Promise.resolve();
    expect(posted).toEqual([[1, 2, 3]]);
    batch.send(4);
    await new Promise((resolve) => setImmediate(resolve));
    expect(posted).toEqual([[1, 2, 3], [4]]);
  });

  it('posts at once on flush, and nothing when nothing waits', async () => {
    const posted: string[][] = [];
    const batch = new MessageBatch<string>({ postMessage: (messages) => posted.push(messages) });
    batch.flush();
    batch.send('a');
    batch.flush();
    expect(posted).toEqual([['a']]);
    await Promise.resolve();
    expect(posted).toEqual([['a']]);
  });

  it('rings the other thread after posting a batch that holds an urgent message, and only then', async () => {
    const events: string[] = [];
    const batch = new MessageBatch<string>({ postMessage: (messages) => events.push(`post ${messages.join(',')}`) }, () => events.push('ring'));
    batch.send('a');
    await Promise.resolve();
    batch.send('b');
    batch.send('c', true);
    batch.send('d');
    await Promise.resolve();
    batch.send('e');
    batch.flush();
    expect(events).toEqual(['post a', 'post b,c,d', 'ring', 'post e']);
  });
});
