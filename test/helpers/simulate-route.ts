/**
 * Runs a route of English steps through a simulated call (as `sprachrohr dialplan simulate`
 * does): the caller is a list of lines, and every prompt, transfer, recording and hangup comes
 * out as a line.
 */
import { pino } from 'pino';
import { createDialectRenderer } from '../../engine/registry.js';
import { parseDialplan } from '../../src/dialplan/dialplan-loader.js';
import { runRoute, type RouteEnd } from '../../src/dialplan/run-route.js';
import { SimulatedCall, type SimulatedTarget } from '../../src/dialplan/simulation/simulated-call.js';

const renderer = createDialectRenderer();

/** What a simulated call printed, how it ended and its variables at the end. */
export interface Simulated {
  readonly out: string[];
  readonly end: RouteEnd;
  readonly vars: Record<string, string>;
}

/** Options of a simulated route: how transfer targets answer, extra route fields, the clock, the webhook secret. */
export interface SimulateOptions {
  readonly target?: SimulatedTarget;
  /** Route fields (YAML lines indented by four spaces) added before `steps`. */
  readonly route?: string;
  readonly at?: string;
  readonly webhookSecret?: string;
}

/** Runs `steps` (YAML list items indented by six spaces) of a route on number 100 against the caller's `lines`. */
export async function simulateRoute(steps: string, lines: string[], options: SimulateOptions = {}): Promise<Simulated> {
  const text = `name: t\nroutes:\n  - number: "100"\n    language: en\n    voice: anna\n${options.route ?? ''}    steps:\n${steps}`;
  const [route] = parseDialplan('t.yaml', text);
  const out: string[] = [];
  const input = [...lines];
  const call = new SimulatedCall(
    route!,
    {
      caller: 'sip:+41790000000@example.ch',
      called: '100',
      at: new Date(options.at ?? '2026-11-25T10:00:00+01:00'),
      target: options.target ?? 'answer',
      webhookSecret: options.webhookSecret ?? null,
    },
    { readLine: async () => input.shift() ?? null, print: (line) => out.push(line) },
    renderer,
    pino({ level: 'silent' }),
  );
  const end = await runRoute(call);
  if (end === 'last-step') await call.hangup();
  return { out, end, vars: call.vars };
}
