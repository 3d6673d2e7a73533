/**
 * Registration refresh of many trunks: TRUNKS_BENCH_TRUNKS trunks (default 50) on one SIP
 * endpoint register with SIPp as the registrar (test/bench/sipp/registrar-plain.uas.xml), which
 * grants TRUNKS_BENCH_GRANTED seconds (4, so each binding is refreshed every 2 s), for
 * TRUNKS_BENCH_SECONDS (30). Measured at the gateway, as each REGISTER leaves: how far each
 * refresh lands from its due time (a binding granted g seconds is due again after
 * max(g/2, g − 60) s, counted from when its REGISTER was planned to go), whether lateness adds
 * up over the refreshes (drift), the spread of the first registrations, and the event loop's
 * delay meanwhile. At the end every binding is removed.
 * Run: npm run bench:trunks
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import { SipEndpoint } from '../../src/telephony/sip/sip-endpoint.js';
import type { SipRequest } from '../../src/telephony/sip/sip-message.js';
import type { SipPeer } from '../../src/telephony/sip/sip-transport.js';
import { checkTrunks } from '../../src/telephony/trunks/trunk-loader.js';
import { refreshDelayMs } from '../../src/telephony/trunks/trunk-registration.js';
import { TrunkService } from '../../src/telephony/trunks/trunk-service.js';
import { startSippServer } from '../helpers/sipp.js';

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const TRUNKS = setting('TRUNKS_BENCH_TRUNKS', 50);
const GRANTED = setting('TRUNKS_BENCH_GRANTED', 4);
const SECONDS = setting('TRUNKS_BENCH_SECONDS', 30);

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

const due = refreshDelayMs(GRANTED);
const registrar = await startSippServer({
  scenario: new URL('./sipp/registrar-plain.uas.xml', import.meta.url).pathname,
  calls: 0,
  timeoutMs: (SECONDS + 30) * 1000,
  variables: { granted: String(GRANTED) },
});
const endpoint = new SipEndpoint({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) });
await endpoint.listen();
process.env['TRUNKS_BENCH_PASSWORD'] = 'unused';
const text = ['trunks:'];
for (let i = 0; i < TRUNKS; i++)
  text.push(
    `  - name: t${i}`,
    `    registrar: ${registrar.address}`,
    `    username: gw${i}`,
    '    password_env: TRUNKS_BENCH_PASSWORD',
    '    options_interval_s: 0',
  );
const trunks = checkTrunks('bench-trunks.yaml', text.join('\n'));

/** When each registration's REGISTERs left (by Call-ID), removals apart. */
const sent = new Map<string, number[]>();
const client = {
  product: 'sprachrohr',
  contactFor: (transport: SipPeer['transport']) => endpoint.contactFor(transport),
  request(request: SipRequest, peer: SipPeer) {
    if (request.headers.get('Expires') !== '0') {
      const callId = request.headers.get('Call-ID')!;
      sent.set(callId, [...(sent.get(callId) ?? []), performance.now()]);
    }
    return endpoint.request(request, peer);
  },
};
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
const service = new TrunkService(client, pino({ level: 'silent' }));
const started = performance.now();
service.apply(trunks);
// Half a period past the window, so that the last refresh due in it is not cut off by a hair.
await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000 + due / 2));
loop.disable();
const registered = service.status().filter((trunk) => trunk.registration?.state === 'registered').length;
const closeStarted = performance.now();
await service.close();
const closeMs = performance.now() - closeStarted;
await endpoint.close();
const sippResult = await registrar.stop(3000);

const lateness: number[] = [];
const firsts: number[] = [];
/** Refreshes due within the window: every `due` from the start. */
const expected = TRUNKS * Math.floor((SECONDS * 1000) / due);
/** How far each trunk's last refresh is from the start + n × due: a drift would add up there. */
const drift: number[] = [];
const slopes: number[] = [];
for (const times of sent.values()) {
  firsts.push(times[0]! - started);
  for (let i = 1; i < times.length; i++) lateness.push(times[i]! - times[i - 1]! - due);
  drift.push(times.at(-1)! - started - (times.length - 1) * due);
  // The least-squares slope of each REGISTER's lateness against its number: what lateness adds per refresh.
  const late = times.map((time, k) => time - started - k * due);
  const meanK = (late.length - 1) / 2;
  const meanLate = late.reduce((sum, value) => sum + value, 0) / late.length;
  const covariance = late.reduce((sum, value, k) => sum + (k - meanK) * (value - meanLate), 0);
  const variance = late.reduce((sum, _value, k) => sum + (k - meanK) ** 2, 0);
  if (variance > 0) slopes.push(covariance / variance);
}
const refreshes = lateness.length;
console.log(`Trunk registration: ${TRUNKS} trunks, bindings of ${GRANTED} s (refreshed every ${due / 1000} s), ${SECONDS} s, SIPp as the registrar:`);
console.log('| measure | figure | target |');
console.log('|---|---|---|');
console.log(`| registered at the end | ${registered} of ${TRUNKS} | all |`);
console.log(`| first REGISTERs sent after start | all within ${Math.max(...firsts).toFixed(1)} ms | — |`);
console.log(`| refreshes | ${refreshes} (${expected} due in the window) | none missed |`);
console.log(
  `| each refresh: interval − due interval | p50 ${percentile(lateness, 50).toFixed(2)} ms, p99 ${percentile(lateness, 99).toFixed(2)} ms, max ${Math.max(...lateness).toFixed(2)} ms, min ${Math.min(...lateness).toFixed(2)} ms | — |`,
);
console.log(`| last refresh − (start + n × due), per trunk | p50 ${percentile(drift, 50).toFixed(2)} ms, max ${Math.max(...drift).toFixed(2)} ms | no drift |`);
console.log(
  `| lateness added per refresh (slope over a trunk's refreshes) | p50 ${percentile(slopes, 50).toFixed(3)} ms, max ${Math.max(...slopes).toFixed(3)} ms | 0 |`,
);
console.log(`| event loop delay meanwhile | p99 ${(loop.percentile(99) / 1e6).toFixed(2)} ms, max ${(loop.max / 1e6).toFixed(2)} ms | — |`);
console.log(`| removing all ${TRUNKS} bindings at shutdown | ${closeMs.toFixed(1)} ms | — |`);
console.log(`(SIPp: ${sippResult.successful} registrations removed, ${sippResult.failed} failed)`);
