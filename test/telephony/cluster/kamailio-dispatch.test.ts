/**
 * Kamailio in front of two gateway instances on one PostgreSQL database, as
 * docker/compose.cluster.yaml runs them: the shipped docker/kamailio/kamailio.cfg and
 * dispatcher.list (placeholders filled with the instances' loopback addresses), two `sprachrohr
 * serve` processes from dist/ sharing a database of a PostgreSQL cluster the test starts, SIPp
 * callers calling Kamailio. Calls spread over both instances and both meter them into the one
 * ledger; ACK, the caller's re-INVITEs and BYE go through Kamailio to the instance that
 * answered, as does an instance's own BYE to the caller; RTP goes straight between caller and
 * instance. Then one instance is killed with SIGKILL while calls are up: its calls are lost,
 * the survivor's complete through Kamailio, and the new calls all succeed on the survivor (an
 * INVITE sent to the dead instance before Kamailio took it out is failed over after
 * fr_timer). An instance started again on its address is probed back in, and at its call limit
 * answers 503, which Kamailio fails over. That instance is then drained over its admin
 * endpoint: its probes' 503 take it out, new calls go to the other, its call finishes and it
 * exits. The last instance, killed while idle, is taken out by the probes alone. Skipped, with
 * the reason, only where Kamailio or PostgreSQL cannot be installed.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, eventuallyAsync } from '../../helpers/eventually.js';
import { kamailioMissing, type KamailioRun } from '../../helpers/kamailio.js';
import {
  acknowledged,
  callsOfRun,
  dispatched,
  destinationFlags,
  failedInvites,
  failedOver,
  finalDestinations,
  inDialog,
  markedDown,
  PROXY_CALLER,
  sharedStore,
  startCluster,
  untilFlags,
  type Cluster,
  type Instance,
} from '../../helpers/kamailio-cluster.js';
import { postgresMissing, startPostgres, type PostgresRun } from '../../helpers/postgres.js';
import { assertSippPassed, removeSippRuns, runSipp, sippScenario, startSipp, type SippResult } from '../../helpers/sipp.js';

const missing = kamailioMissing() ?? postgresMissing();
const ADMIN_TOKEN = 'cluster-test-admin-token';

/** Calls where the caller hangs up after `holdMs`, `calls` of them at `rate` a second. */
function callerRun(kamailio: KamailioRun, calls: number, rate: number, holdMs: number): Promise<SippResult> {
  return runSipp({ scenario: PROXY_CALLER, target: kamailio.address, service: 'hello', calls, rate, timeoutMs: 30_000, extraArgs: ['-d', String(holdMs)] });
}

describe.skipIf(missing !== null)(`Kamailio dispatching to two instances on one database${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let postgres: PostgresRun | undefined;
  let database = '';
  let cluster: Cluster | undefined;
  let kamailio: KamailioRun;
  const port = (instance: Instance) => instance.sipAddress.split(':')[1]!;

  beforeAll(async () => {
    postgres = await startPostgres();
    database = await postgres.createDatabase('cluster');
    cluster = await startCluster({
      rtpPorts: ['43400-43419', '43420-43439'],
      instance: { env: { ...sharedStore(database), SPRACHROHR_ADMIN_TOKEN: ADMIN_TOKEN } },
    });
    kamailio = cluster.kamailio;
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await postgres?.stop();
    await removeSippRuns();
  });

  it('spreads calls over both instances; ACK, re-INVITE and BYE, the caller’s and the instance’s, go through Kamailio to the instance that took the call', async () => {
    const [callers, hangups, holds] = await Promise.all([
      callerRun(kamailio, 8, 4, 1500),
      runSipp({ scenario: sippScenario('bye-from-gateway.xml'), target: kamailio.address, service: 'talk', calls: 2, rate: 10, timeoutMs: 30_000 }),
      runSipp({ scenario: sippScenario('reinvite-hold.xml'), target: kamailio.address, service: 'hello', calls: 2, rate: 10, timeoutMs: 30_000 }),
    ]);
    assertSippPassed(callers, 8);
    assertSippPassed(hangups, 2);
    assertSippPassed(holds, 2);

    const log = kamailio.log();
    const [a, b] = cluster!.instances as [Instance, Instance];
    await eventually(() => a.endedCalls().size + b.endedCalls().size === 12, 5000, 'both instances to log their calls as ended');
    // Round-robin gives each 6 of the 12 (5 or 7 when an instance too slow to answer within
    // fr_timer had one moved on); every call ended where Kamailio sent it.
    expect(a.endedCalls().size).toBeGreaterThanOrEqual(5);
    expect(b.endedCalls().size).toBeGreaterThanOrEqual(5);
    const sentTo = finalDestinations(log);
    for (const instance of [a, b]) for (const callId of instance.endedCalls().keys()) expect(sentTo.get(callId)).toBe(instance.sipAddress);

    const relayed = inDialog(log);
    for (const instance of [a, b]) {
      for (const [callId, reason] of instance.endedCalls()) {
        // (A retransmitted BYE is relayed, and logged, again.)
        const byes = relayed.filter((request) => request.method === 'BYE' && request.callId === callId);
        expect(byes.length, `BYE of ${callId}`).toBeGreaterThanOrEqual(1);
        for (const bye of byes) {
          if (reason === 'bye') {
            // The caller's BYE: from SIPp, to this instance's Contact.
            expect(bye.to).toMatch(new RegExp(`^sip:([^@]*@)?127\\.0\\.0\\.1:${port(instance)}\\b`));
            expect(bye.from).not.toBe(instance.sipAddress);
          } else {
            // The instance's BYE: from its own SIP port, to the caller's Contact.
            expect(reason).toBe('hangup');
            expect(bye.from).toBe(instance.sipAddress);
            expect(bye.to).toMatch(/^sip:sipp@127\.0\.0\.1:\d+/);
          }
        }
        expect(relayed.some((request) => request.method === 'ACK' && request.callId === callId)).toBe(true);
      }
      // The caller's re-INVITEs (hold, then resume) reached this instance's Contact and this
      // instance put its calls on hold and back.
      const heldCalls = new Set(instance.logged('hold').map((entry) => String(entry['callId'])));
      for (const callId of heldCalls) {
        const reinvites = relayed.filter((request) => request.method === 'INVITE' && request.callId === callId);
        expect(reinvites.length, `re-INVITEs of ${callId}`).toBeGreaterThanOrEqual(2);
        for (const reinvite of reinvites) expect(reinvite.to).toMatch(new RegExp(`^sip:([^@]*@)?127\\.0\\.0\\.1:${port(instance)}\\b`));
        const held = instance.logged('hold').filter((entry) => entry['callId'] === callId);
        expect(held.map((entry) => entry['held'])).toEqual([true, false]);
      }
    }
    expect(a.logged('hold').length + b.logged('hold').length).toBe(4);

    // Both metered their calls into the one ledger: each call's entry is in the shared database.
    const ended = [...a.endedCalls().keys(), ...b.endedCalls().keys()];
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      await eventuallyAsync(
        async () => {
          const ledger = new Set((await client.query<{ request_id: string }>('SELECT request_id FROM usage_ledger')).rows.map((row) => row.request_id));
          return ended.every((callId) => ledger.has(`call_${callId}_tts`));
        },
        5000,
        'every call of both instances in the ledger',
      );
    } finally {
      await client.end();
    }
  }, 45_000);

  it("a REFER from the instance that took the call reaches the caller through Kamailio, and the caller's NOTIFYs come back to that instance", async () => {
    const run = await startSipp({
      scenario: sippScenario('refer-transfer.xml'),
      target: kamailio.address,
      service: 'refer',
      calls: 2,
      rate: 10,
      timeoutMs: 30_000,
      variables: { final_status: '200' },
    });
    assertSippPassed(await run.result, 2);
    const log = kamailio.log();
    const relayed = inDialog(log);
    const sentTo = finalDestinations(log);
    const calls = callsOfRun(run.pid, sentTo.keys());
    expect(calls).toHaveLength(2);
    for (const callId of calls) {
      const instance = cluster!.instances.find((candidate) => candidate.sipAddress === sentTo.get(callId))!;
      // The instance's REFER, from its SIP port to the caller's Contact…
      const refers = relayed.filter((request) => request.method === 'REFER' && request.callId === callId);
      expect(refers.length, `REFER of ${callId}`).toBeGreaterThanOrEqual(1);
      for (const refer of refers) {
        expect(refer.from).toBe(instance.sipAddress);
        expect(refer.to).toMatch(/^sip:sipp@127\.0\.0\.1:\d+/);
      }
      // …and the caller's two NOTIFYs, to the Contact of that same instance.
      const notifies = relayed.filter((request) => request.method === 'NOTIFY' && request.callId === callId);
      expect(notifies.length, `NOTIFYs of ${callId}`).toBeGreaterThanOrEqual(2);
      for (const notify of notifies) expect(notify.to).toMatch(new RegExp(`^sip:([^@]*@)?127\\.0\\.0\\.1:${port(instance)}\\b`));
      // The instance ended its leg once the transfer was reported done.
      await eventually(() => instance.endedCalls().has(callId), 5000, `the instance to end ${callId}`);
    }
  }, 45_000);

  it('kill -9 of one instance: its calls are lost, the survivor’s complete through Kamailio, new calls all go to the survivor', async () => {
    const [victim, survivor] = cluster!.instances as [Instance, Instance];
    // Four calls the instances end themselves after about 4 s.
    const long = await startSipp({
      scenario: sippScenario('bye-from-gateway.xml'),
      target: kamailio.address,
      service: 'talk',
      calls: 4,
      rate: 20,
      timeoutMs: 40_000,
    });
    // Up: SIPp's ACK of each went through Kamailio.
    const answered = () => callsOfRun(long.pid, acknowledged(kamailio.log()));
    await eventually(() => answered().length === 4, 15_000, 'the four long calls to be answered');
    const placed = finalDestinations(kamailio.log());
    const longOn = (instance: Instance) => answered().filter((callId) => placed.get(callId) === instance.sipAddress);
    // Two each, unless an instance too slow for fr_timer had one moved on.
    expect(longOn(victim).length).toBeGreaterThanOrEqual(1);
    expect(longOn(survivor).length).toBeGreaterThanOrEqual(1);

    const killedAt = Date.now();
    await victim.kill();
    // New calls straight away: the first reach Kamailio before it knows the instance is gone.
    const fresh = await startSipp({
      scenario: PROXY_CALLER,
      target: kamailio.address,
      service: 'hello',
      calls: 10,
      rate: 5,
      timeoutMs: 30_000,
      extraArgs: ['-d', '1500'],
    });
    const freshResult = await fresh.result;
    const log = kamailio.log();

    // Every new call succeeded, on the survivor: sent there, or failed over to it from the dead one.
    assertSippPassed(freshResult, 10);
    const freshIds = callsOfRun(fresh.pid, dispatched(log).keys());
    expect(freshIds).toHaveLength(10);
    const movedOn = failedOver(log);
    for (const callId of freshIds) expect(finalDestinations(log).get(callId), callId).toBe(survivor.sipAddress);
    await eventually(() => freshIds.every((callId) => survivor.endedCalls().get(callId) === 'bye'), 10_000, 'the survivor to log the new calls as ended');

    // The survivor's two long calls end with its own BYE through Kamailio; the victim's never end.
    await eventually(() => longOn(survivor).every((callId) => survivor.endedCalls().get(callId) === 'hangup'), 20_000, 'the survivor to end its long calls');
    const longResult = await long.stop();
    expect(longResult.successful).toBe(longOn(survivor).length);
    expect(longResult.created).toBe(4);
    for (const callId of longOn(survivor))
      expect(inDialog(kamailio.log()).some((request) => request.method === 'BYE' && request.callId === callId && request.from === survivor.sipAddress)).toBe(
        true,
      );

    // Kamailio took the victim out and keeps probing it; the survivor stays active.
    await untilFlags(kamailio, victim.sipAddress, 'I', 15_000, 'the killed instance marked inactive');
    expect((await destinationFlags(kamailio)).get(survivor.sipAddress)).toMatch(/^A/);
    const down = markedDown(kamailio.log(), victim.sipAddress, killedAt);
    expect(down).not.toBeNull();
    const freshMoved = freshIds.filter((callId) => movedOn.has(callId)).length;
    console.info(
      `kill -9 → instance marked down after ${down!.at - killedAt} ms (by ${down!.by === 'probe' ? 'its probes' : 'an INVITE'}); ${freshMoved} of 10 new calls failed over from it; new calls failed: ${freshResult.failed}`,
    );
    // Nothing crashed: the survivor and Kamailio still run.
    expect(survivor.serve.child.exitCode).toBeNull();
    expect(kamailio.log()).not.toMatch(/CRITICAL|segfault/i);
  }, 60_000);

  it('a restarted instance is probed back in; one at its call limit answers 503 and the INVITE goes on to the other', async () => {
    // The same address again, now taking one call at a time.
    const restarted = await cluster!.startAgain(0, { SPRACHROHR_SIP_MAX_CALLS: '1' });
    const other = cluster!.instances[1]!;
    await untilFlags(kamailio, restarted.sipAddress, 'A', 20_000, 'the restarted instance active again');
    expect(kamailio.log()).toMatch(new RegExp(`instance up: OPTIONS sip:${restarted.sipAddress.replaceAll('.', '\\.')} `));

    // Four calls at once: round-robin gives each instance two, and the restarted one has room for one.
    const calls = await runSipp({
      scenario: sippScenario('bye-from-gateway.xml'),
      target: kamailio.address,
      service: 'talk',
      calls: 4,
      rate: 20,
      timeoutMs: 30_000,
    });
    assertSippPassed(calls, 4);
    const log = kamailio.log();
    const refused = failedInvites(log)
      .filter((failed) => failed.address === restarted.sipAddress && failed.status === 503)
      .map((failed) => failed.callId);
    expect(refused, log.slice(log.lastIndexOf('instance up'))).toHaveLength(1);
    expect(failedOver(log).get(refused[0]!)).toBe(other.sipAddress);
    // An instance's log lines reach its stdout asynchronously: they may come after SIPp exited.
    await eventually(() => other.endedCalls().has(refused[0]!) && restarted.endedCalls().size > 0, 5000, 'both instances to log their calls as ended');
    expect(other.endedCalls().get(refused[0]!)).toBe('hangup');
    expect(restarted.endedCalls().size).toBe(1);
  }, 60_000);

  it('drain over the admin endpoint: its probes’ 503 take the instance out, new calls go to the other, its call up finishes, then it exits', async () => {
    // The restarted instance (one call at a time) and the other.
    const [drained, other] = cluster!.instances as [Instance, Instance];
    const long = await startSipp({
      scenario: PROXY_CALLER,
      target: kamailio.address,
      service: 'hello',
      calls: 2,
      rate: 20,
      timeoutMs: 30_000,
      extraArgs: ['-d', '6000'],
    });
    await eventually(() => callsOfRun(long.pid, acknowledged(kamailio.log())).length === 2, 15_000, 'the two long calls to be answered');
    const placed = finalDestinations(kamailio.log());
    // Round-robin gives each one: the drained instance's one slot is taken.
    const [onDrained] = callsOfRun(long.pid, acknowledged(kamailio.log())).filter((callId) => placed.get(callId) === drained.sipAddress);
    expect(onDrained, kamailio.log().slice(-3000)).toBeDefined();

    const drainedAt = Date.now();
    const drain = await fetch(`${drained.serve.baseUrl}/admin/drain`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(drain.status, await drain.clone().text()).toBe(202);
    await untilFlags(kamailio, drained.sipAddress, 'I', 10_000, 'the drained instance out of Kamailio’s set');
    // Its OPTIONS answered 503 did it, while its call was still up; no INVITE had to find out.
    const down = markedDown(kamailio.log(), drained.sipAddress, drainedAt);
    expect(down?.by).toBe('probe');
    expect(drained.alive()).toBe(true);
    expect(drained.endedCalls().has(onDrained!)).toBe(false);

    // New calls: every one sent to the other instance straight away, none to the drained one.
    const fresh = await startSipp({
      scenario: PROXY_CALLER,
      target: kamailio.address,
      service: 'hello',
      calls: 4,
      rate: 10,
      timeoutMs: 20_000,
      extraArgs: ['-d', '300'],
    });
    assertSippPassed(await fresh.result, 4);
    const log = kamailio.log();
    const freshIds = callsOfRun(fresh.pid, dispatched(log).keys());
    expect(freshIds).toHaveLength(4);
    for (const callId of freshIds) expect(dispatched(log).get(callId), callId).toBe(other.sipAddress);
    expect(freshIds.filter((callId) => failedOver(log).has(callId))).toEqual([]);

    // The call up on the drained instance ends with the caller's BYE, and then the instance exits 0.
    assertSippPassed(await long.result, 2);
    // The instance logs the call as ended once it has the BYE (and has answered it): after SIPp's last message.
    await eventually(() => drained.endedCalls().has(onDrained!), 5000, 'the drained instance to log its call as ended');
    expect(drained.endedCalls().get(onDrained!)).toBe('bye');
    expect(await drained.serve.exited).toBe(0);
    console.info(`drain → out of Kamailio's set after ${down!.at - drainedAt} ms (two probes answered 503)`);
  }, 40_000);

  it('the last instance killed while idle: its probes take it out, then Kamailio answers 503 itself', async () => {
    // The drained instance has exited; the other is left.
    const alive = cluster!.instances.filter((instance) => instance.alive());
    expect(alive).toHaveLength(1);
    const killedAt = Date.now();
    await Promise.all(alive.map((instance) => instance.kill()));
    // No call goes there: only the OPTIONS probes notice (two unanswered in a row).
    await eventuallyAsync(
      async () => [...(await destinationFlags(kamailio)).values()].every((flags) => flags.startsWith('I')),
      20_000,
      'both instances marked inactive',
    );
    console.info(`idle instance killed → marked inactive by its probes within ${Date.now() - killedAt} ms`);
    const refused = await callerRun(kamailio, 1, 1, 500);
    expect(refused.successful).toBe(0);
    expect(refused.report).toContain('SIP/2.0 503 No Gateway Available');
    expect(kamailio.log()).toMatch(/no active instance for INVITE/);
  }, 40_000);
});
