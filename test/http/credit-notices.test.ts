/**
 * Credit notices by e-mail (spec 8): live traffic that takes a credit past 80 % and then 95 %
 * sends one message each to the account's addresses, through a real SMTP server on loopback
 * (the smtp-server library), and no more after.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountService } from '../../src/auth/account-service.js';
import { EntitlementService } from '../../src/entitlements/entitlement-service.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

interface Received {
  readonly from: string;
  readonly to: string[];
  readonly data: string;
}

let t: TestApp;
let smtp: SMTPServer;
const received: Received[] = [];

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let data = '';
      stream.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          data,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  t = await createTestApp({
    SPRACHROHR_TTS_ENGINE: 'espeak',
    SPRACHROHR_SMTP_URL: `smtp://127.0.0.1:${port}`,
    SPRACHROHR_NOTICE_FROM: 'billing@sprachrohr.example',
  });
});
afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const synth = (key: string) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/tts',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: { text: 'Grüezi mitenand.', format: 'pcm16' },
  });

describe('credit notices', () => {
  it('go out once at 80 % and once at 95 % used, to every address of the account', async () => {
    const account = await new AccountService(t.store.accounts).create('notice-co', ['ops@notice.example', 'cfo@notice.example']);
    // One request is about 1.2 s, a credit a second: 3 credits are crossed at 80 % by the second and 95 % by the third.
    await new EntitlementService(t.store.entitlements).add(account.id, { kind: 'credit', credits: 3 });
    const key = (await t.services.keys.create('notice', 'live', account.id)).key;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await synth(key)).statusCode);
      await t.services.notices.settle();
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(received).toHaveLength(2);
    for (const message of received) {
      expect(message.from).toBe('billing@sprachrohr.example');
      expect(message.to.sort()).toEqual(['cfo@notice.example', 'ops@notice.example']);
      expect(message.data).toMatch(/credit #\d+ of the account notice-co/);
    }
    expect(received[0]!.data).toMatch(/^Subject: sprachrohr: 80 % of the credit of notice-co is used/m);
    expect(received[1]!.data).toMatch(/^Subject: sprachrohr: 95 % of the credit of notice-co is used/m);
    expect(received[1]!.data).toContain('Left: 0 credits');
  });
});
