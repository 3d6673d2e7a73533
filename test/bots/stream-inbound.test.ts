/** What a stream bot sends is read strictly: each bad message is named, none throws. */
import { describe, expect, it } from 'vitest';
import { readMediaMessage, readTextMessage } from '../../src/bots/stream-inbound.js';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('messages of a media (Twilio) bot', () => {
  it('takes media, mark and clear as Twilio bots send them', () => {
    expect(readMediaMessage(json({ event: 'media', streamSid: 'MZ1', media: { payload: 'f39/fw==' } }), false)).toEqual({
      message: { event: 'media', streamSid: 'MZ1', media: { payload: 'f39/fw==' } },
    });
    expect(readMediaMessage(json({ event: 'mark', streamSid: 'MZ1', mark: { name: 'done' } }), false)).toHaveProperty('message');
    expect(readMediaMessage(json({ event: 'clear', streamSid: 'MZ1' }), false)).toHaveProperty('message');
    // streamSid is not needed: the socket names the stream.
    expect(readMediaMessage(json({ event: 'clear' }), false)).toHaveProperty('message');
  });

  const bad: Array<[string, Buffer, boolean, RegExp]> = [
    ['binary', Buffer.from([1, 2, 3]), true, /binary messages are not read/],
    ['not JSON', Buffer.from('{"event":'), false, /not JSON/],
    ['null', json(null), false, /unknown event null/],
    ['an unknown event', json({ event: 'dance' }), false, /unknown event "dance"; expected one of media, mark, clear/],
    ['media without a payload', json({ event: 'media', media: {} }), false, /media: \/media must have required property 'payload'/],
    ['a payload that is a number', json({ event: 'media', media: { payload: 7 } }), false, /media: \/media\/payload must be string/],
    ['a mark without a name', json({ event: 'mark', mark: {} }), false, /mark: \/mark must have required property 'name'/],
    ['a mark with an empty name', json({ event: 'mark', mark: { name: '' } }), false, /mark: \/mark\/name must NOT have fewer than 1 characters/],
  ];
  for (const [what, data, binary, problem] of bad)
    it(`names the problem of ${what}`, () => {
      const read = readMediaMessage(data, binary);
      expect(read).toHaveProperty('problem');
      expect((read as { problem: string }).problem).toMatch(problem);
    });
});

describe('messages of a text bot', () => {
  it('takes say, clear, transfer and hangup', () => {
    for (const message of [
      { type: 'say', text: 'Grüezi', voice: 'anna', language: 'de-CH', dialect: 'zh', barge_in: false, id: 'a' },
      { type: 'clear' },
      { type: 'transfer', target: '+41445550111', mode: 'refer' },
      { type: 'hangup', reason: 'done' },
    ])
      expect(readTextMessage(json(message), false)).toEqual({ message });
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['a say without text', { type: 'say' }, /say: \/ must have required property 'text'/],
    ['a say of more than 5000 characters', { type: 'say', text: 'a'.repeat(5001) }, /say: \/text must NOT have more than 5000 characters/],
    ['an unknown field', { type: 'say', text: 'x', speed: 2 }, /say: \/ must NOT have additional properties/],
    ['a transfer mode that does not exist', { type: 'transfer', target: '1', mode: 'teleport' }, /transfer: \/mode/],
    ['a hangup reason across lines', { type: 'hangup', reason: 'a\r\nb' }, /hangup: \/reason must match pattern/],
    ['a message without type', { text: 'x' }, /unknown type null; expected one of say, clear, transfer, hangup/],
  ];
  for (const [what, message, problem] of bad)
    it(`names the problem of ${what}`, () => {
      const read = readTextMessage(json(message), false);
      expect((read as { problem: string }).problem).toMatch(problem);
    });
});
