/**
 * Trunk registration against SIPp as the carrier's registrar (Debian `sip-tester`): a 503 with
 * Retry-After first, then digest challenges (MD5, qop auth) answered and checked by SIPp,
 * the refresh before the granted 4 seconds run out, and the binding removed at shutdown; over
 * UDP and over TCP (SIPp `-t t1`, every REGISTER on the trunk's connection). (TLS: SIPp from
 * Debian is built without it; kamailio-tls.test.ts registers over TLS with Kamailio.)
 * `GET /v1/trunks`' view is read from the running service along the way. A wrong password,
 * and trunks added to and taken out of the trunk file while the service runs. (The registrar
 * scenarios expect REGISTERs only: these trunks send no OPTIONS keep-alive.)
 */
import dgram from 'node:dgram';
import fs from 'node:fs/promises';
import path from 'node:path';
import { eventually } from '../../helpers/eventually.js';
import { afterEach, describe, expect, it } from 'vitest';
import { assertSippPassed, sippScenario, startSippServer } from '../../helpers/sipp.js';
import { anyNumberDialplan, startTelephony, type StartedTelephony } from '../../helpers/started-telephony.js';
import { trunkFile } from '../../helpers/trunk-file.js';

const DIALPLAN = anyNumberDialplan('      - hangup: {}');
const timing = { retryBaseMs: 300, retryMaxMs: 2000, unregisterTimeoutMs: 2000 };

let telephony: StartedTelephony | null = null;
afterEach(async () => {
  await telephony?.close();
  telephony = null;
});

/** The first test's run over each transport: the trunk's `transport`, SIPp's `-t`, the RTP ports. */
const TRANSPORTS = [
  { transport: 'udp', sipp: 'u1', rtpPorts: '43000-43019' },
  { transport: 'tcp', sipp: 't1', rtpPorts: '43340-43359' },
] as const;

describe('trunk registration (SIPp as the registrar)', () => {
  it.each(TRANSPORTS)(
    'over $transport: waits out a 503, answers the challenge, refreshes before the binding runs out, and removes it at shutdown',
    async ({ transport, sipp, rtpPorts }) => {
      const registrar = await startSippServer({
        scenario: sippScenario('registrar.uas.xml'),
        transport: sipp,
        calls: 1,
        timeoutMs: 20_000,
        variables: { username: 'gw-zuerich', password: 'Sehr-geheim-1' },
      });
      const trunks = trunkFile({
        name: 'carrier',
        registrar: registrar.address,
        transport,
        username: 'gw-zuerich',
        password_env: 'TEST_TRUNK_PASSWORD',
        options_interval_s: 0,
        expires_s: 3600,
      });
      process.env['TEST_TRUNK_PASSWORD'] = 'Sehr-geheim-1';
      const started = Date.now();
      // The Contact registered is the advertised address (a public one in front of the one we listen on).
      telephony = await startTelephony(
        DIALPLAN,
        { SPRACHROHR_RTP_PORTS: rtpPorts, SPRACHROHR_SIP_ADVERTISED_ADDRESS: '127.0.0.2' },
        { files: { 'trunks.yaml': trunks }, registrationTiming: timing },
      );
      const service = telephony.service;
      const registration = () => service.trunkStatus()[0]!.registration!;
      expect(service.trunkStatus()[0]).toMatchObject({ name: 'carrier', registrar: registrar.address, transport: transport.toUpperCase(), maxCalls: 30 });

      // The 503 first: failed, the next attempt when Retry-After says.
      await eventually(() => registration().failures === 1, 3000);
      expect(registration()).toMatchObject({ state: 'failed', lastError: '503 Service Unavailable' });
      const retryAt = Date.parse(registration().nextAttemptAt!);
      expect(retryAt - Date.now()).toBeGreaterThan(500);

      await eventually(() => registration().state === 'registered', 4000);
      const registeredAt = Date.now();
      expect(registeredAt - started).toBeGreaterThanOrEqual(1000);
      const first = registration();
      expect(first).toMatchObject({ failures: 0, lastError: null });
      // The binding granted for 4 s, not the 3600 asked for.
      expect(Date.parse(first.expiresAt!) - registeredAt).toBeLessThanOrEqual(4000);
      expect(Date.parse(first.expiresAt!) - registeredAt).toBeGreaterThan(3000);

      // Refreshed at about half the granted time, before it ran out.
      await eventually(() => registration().lastRegisteredAt !== first.lastRegisteredAt, 4000);
      const refreshedAfter = Date.parse(registration().lastRegisteredAt!) - Date.parse(first.lastRegisteredAt!);
      expect(refreshedAfter).toBeGreaterThanOrEqual(1900);
      expect(refreshedAfter).toBeLessThan(3500);
      expect(registration().state).toBe('registered');

      // Shutdown removes the binding: SIPp's scenario ends with that REGISTER (Expires: 0).
      await telephony.close();
      telephony = null;
      assertSippPassed(await registrar.result);
      const messages = await fs.readFile(registrar.files.messages, 'latin1');
      const param = transport === 'udp' ? '' : `;transport=${transport}`;
      expect(messages).toMatch(new RegExp(`^Contact: <sip:gw-zuerich@127\\.0\\.0\\.2:\\d+${param}>$`, 'm'));
      expect(messages).not.toMatch(/^Contact: <sip:gw-zuerich@127\.0\.0\.1/m);
      // Every REGISTER came over the trunk's transport: its Request-URI and Via say so, and SIPp
      // (listening on that transport only) logged each as received over it.
      const registers = messages.split(/^-{10,}.*$/m).filter((message) => /^REGISTER sip:/m.test(message));
      expect(registers.length).toBeGreaterThanOrEqual(6);
      for (const register of registers) {
        expect(register).toMatch(new RegExp(`^REGISTER sip:127\\.0\\.0\\.1:\\d+${param} SIP/2\\.0$`, 'm'));
        expect(register).toMatch(new RegExp(`^Via: SIP/2\\.0/${transport.toUpperCase()} `, 'm'));
        expect(register).toMatch(new RegExp(`^${transport.toUpperCase()} message received`, 'm'));
      }
    },
  );
});

describe('trunk registration with a wrong password', () => {
  it('reports the refusal and tries again after a growing pause, without a binding to remove', async () => {
    const registrar = await startSippServer({
      scenario: sippScenario('registrar-refuses.uas.xml'),
      calls: 1,
      timeoutMs: 15_000,
      variables: { username: 'gw-bern', password: 'the-right-one' },
    });
    const trunks = [
      'trunks:',
      '  - name: carrier',
      `    registrar: ${registrar.address}`,
      '    username: gw-bern',
      '    password_env: TEST_TRUNK_WRONG',
      '    options_interval_s: 0',
    ].join('\n');
    process.env['TEST_TRUNK_WRONG'] = 'a-wrong-one';
    telephony = await startTelephony(DIALPLAN, { SPRACHROHR_RTP_PORTS: '43020-43039' }, { files: { 'trunks.yaml': trunks }, registrationTiming: timing });
    const service = telephony.service;
    const registration = () => service.trunkStatus()[0]!.registration!;
    await eventually(() => registration().failures === 1, 3000);
    expect(registration()).toMatchObject({ state: 'failed', expiresAt: null, lastError: '401: the registrar refused the credentials' });
    const firstPause = Date.parse(registration().nextAttemptAt!) - Date.now();
    expect(firstPause).toBeGreaterThan(0);
    expect(firstPause).toBeLessThanOrEqual(timing.retryBaseMs);
    await eventually(() => registration().failures === 2, 3000);
    // The pause doubles with each failure in a row.
    const secondPause = Date.parse(registration().nextAttemptAt!) - Date.now();
    expect(secondPause).toBeGreaterThan(timing.retryBaseMs);
    expect(secondPause).toBeLessThanOrEqual(2 * timing.retryBaseMs);
    assertSippPassed(await registrar.result);
  });
});

describe('trunks follow their file', () => {
  it('registers a trunk added while running, registers a changed one again after removing its old binding, and removes it when taken out', async () => {
    const registrar = await startSippServer({
      scenario: sippScenario('registrar.uas.xml'),
      // The first registration, then the changed trunk's.
      calls: 2,
      timeoutMs: 20_000,
      variables: { username: 'gw-reload', password: 'Sehr-geheim-3' },
    });
    process.env['TEST_TRUNK_RELOAD'] = 'Sehr-geheim-3';
    telephony = await startTelephony(DIALPLAN, { SPRACHROHR_RTP_PORTS: '43060-43079' }, { registrationTiming: timing });
    const service = telephony.service;
    expect(service.trunkStatus()).toEqual([]);
    const trunksFile = path.join(telephony.dir, 'trunks.yaml');
    const trunk = (expires: number) =>
      [
        'trunks:',
        '  - name: added',
        `    registrar: ${registrar.address}`,
        '    username: gw-reload',
        '    password_env: TEST_TRUNK_RELOAD',
        `    expires_s: ${expires}`,
        '    options_interval_s: 0',
      ].join('\n');
    await fs.writeFile(trunksFile, trunk(600));
    await eventually(() => service.trunkStatus()[0]?.registration?.state === 'registered', 5000);
    // A broken file is refused: the trunk stays registered.
    await fs.writeFile(trunksFile, 'trunks:\n  - name: added\n    registrar: [\n');
    const reloads = service.dialplanLibrary.reloads;
    await eventually(() => service.dialplanLibrary.reloads > reloads, 3000);
    expect(service.trunkStatus()[0]?.registration?.state).toBe('registered');
    // Changed: the old binding goes first (Expires: 0), then the new registration (its own Call-ID).
    const first = service.trunkStatus()[0]!.registration!.lastRegisteredAt;
    await fs.writeFile(trunksFile, trunk(1200));
    await eventually(
      () => service.trunkStatus()[0]?.registration?.lastRegisteredAt !== first && service.trunkStatus()[0]?.registration?.state === 'registered',
      5000,
    );
    await fs.writeFile(trunksFile, 'trunks: []\n');
    await eventually(() => service.trunkStatus().length === 0, 3000);
    assertSippPassed(await registrar.result, 2);
    // The REGISTERs SIPp received, in order (its log: one message between separator lines).
    const registers = (await fs.readFile(registrar.files.messages, 'latin1'))
      .split(/^-{10,}.*$/m)
      .filter((message) => /^REGISTER sip:/m.test(message))
      .map((message) => [/^Call-ID: *(\S+)/m.exec(message)![1]!, /^Expires: *(\d+)/m.exec(message)![1]!]);
    const removal = registers.findIndex(([, expires]) => expires === '0');
    const secondCallId = registers.find(([callId]) => callId !== registers[0]![0])![0];
    expect(registers.findIndex(([callId]) => callId === secondCallId)).toBeGreaterThan(removal);
    expect(registers.some(([callId, expires]) => callId === secondCallId && expires === '1200')).toBe(true);
  });
});

describe('a registrar that moved, wants longer bindings and sits behind an authenticating proxy', () => {
  it('follows the 302, takes the Min-Expires of the 423, answers the 407 with SHA-256, and removes the binding there', async () => {
    const real = await startSippServer({ scenario: sippScenario('registrar-proxy-auth.uas.xml'), calls: 1, timeoutMs: 15_000 });
    const moved = await startSippServer({
      scenario: sippScenario('registrar-redirect.uas.xml'),
      calls: 1,
      timeoutMs: 15_000,
      variables: { registrar: real.address },
    });
    process.env['TEST_TRUNK_PROXY'] = 'proxy-secret';
    const trunks = [
      'trunks:',
      '  - name: moved',
      `    registrar: ${moved.address}`,
      '    username: gw-olten',
      '    password_env: TEST_TRUNK_PROXY',
      '    options_interval_s: 0',
    ].join('\n');
    telephony = await startTelephony(DIALPLAN, { SPRACHROHR_RTP_PORTS: '43080-43099' }, { files: { 'trunks.yaml': trunks }, registrationTiming: timing });
    const service = telephony.service;
    const registration = () => service.trunkStatus()[0]!.registration!;
    await eventually(() => registration().state === 'registered', 4000);
    expect(Date.parse(registration().expiresAt!) - Date.now()).toBeGreaterThan(7100 * 1000);
    assertSippPassed(await moved.result);
    await telephony.close();
    telephony = null;
    assertSippPassed(await real.result);
  });
});

describe('a registrar that never answers', () => {
  it('leaves the trunk registering, and does not hold up the shutdown', async () => {
    // A socket that takes the REGISTERs and answers none (Timer F would wait 32 s).
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    let received = 0;
    silent.on('message', () => (received += 1));
    process.env['TEST_TRUNK_SILENT'] = 'unused-secret';
    const trunks = [
      'trunks:',
      '  - name: silent',
      `    registrar: 127.0.0.1:${silent.address().port}`,
      '    username: gw',
      '    password_env: TEST_TRUNK_SILENT',
      '    options_interval_s: 0',
    ].join('\n');
    try {
      telephony = await startTelephony(DIALPLAN, { SPRACHROHR_RTP_PORTS: '43180-43199' }, { files: { 'trunks.yaml': trunks }, registrationTiming: timing });
      await eventually(() => received >= 2, 3000, 'the REGISTER and its retransmission');
      expect(telephony.service.trunkStatus()[0]!.registration).toMatchObject({ state: 'registering', failures: 0 });
      const closing = performance.now();
      await telephony.close();
      telephony = null;
      expect(performance.now() - closing).toBeLessThan(timing.unregisterTimeoutMs + 1000);
    } finally {
      silent.close();
    }
  });
});
