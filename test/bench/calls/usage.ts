/**
 * What the processes of a load run use: the gateway's resident memory (VmRSS) and the CPU time of
 * the gateway, SIPp and this process, read from /proc and sampled while the calls are up.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import { rank, sleep } from './common.js';

/** Resident memory of a process in MiB (VmRSS). */
export async function rssMb(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

let clockTicks = 0;

/** CPU seconds (user + system) a process has used. */
export async function cpuSeconds(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  clockTicks ||= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return Number.NaN;
  }
}

/** The median of five RSS readings 400 ms apart (a process with no call). */
export async function idleRssMb(pid: number): Promise<number> {
  const idleSamples: number[] = [];
  for (let i = 0; i < 5; i++) {
    await sleep(400);
    idleSamples.push(await rssMb(pid));
  }
  return rank(
    idleSamples.sort((a, b) => a - b),
    50,
  );
}

interface Sample {
  readonly at: number;
  readonly rssMb: number;
  readonly gatewayCpu: number;
  readonly sippCpu: number;
  readonly benchCpu: number;
}

/** CPU used in a window, in cores (1 = one core busy all the time). */
export interface CpuFigures {
  readonly gateway: number;
  readonly sipp: number;
  readonly bench: number;
}

/** Samples the gateway's RSS and the CPU time of the gateway, SIPp (once its pid is set) and this process. */
export class UsageSampler {
  readonly samples: Sample[] = [];
  /** SIPp's process, once it runs. */
  sippPid: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly gatewayPid: number) {}

  /** Takes one sample. */
  async sample(): Promise<void> {
    const at = performance.now();
    const [rss, gatewayCpu, sippCpu] = await Promise.all([rssMb(this.gatewayPid), cpuSeconds(this.gatewayPid), cpuSeconds(this.sippPid)]);
    const usage = process.cpuUsage();
    this.samples.push({ at, rssMb: rss, gatewayCpu, sippCpu, benchCpu: (usage.user + usage.system) / 1e6 });
  }

  /** Samples every `intervalMs` until {@link stop}. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.sample(), intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The CPU used between the first and the last sample of the window, and the median RSS in it. */
  window(start: number, end: number): { readonly cpu: CpuFigures; readonly rssMb: number } {
    const inWindow = this.samples.filter((s) => s.at >= start - 1 && s.at <= end + 1).sort((a, b) => a.at - b.at);
    const first = inWindow[0];
    const last = inWindow[inWindow.length - 1];
    const span = first && last && last.at > first.at ? (last.at - first.at) / 1000 : Number.NaN;
    return {
      cpu: {
        gateway: first && last ? (last.gatewayCpu - first.gatewayCpu) / span : Number.NaN,
        sipp: first && last ? (last.sippCpu - first.sippCpu) / span : Number.NaN,
        bench: first && last ? (last.benchCpu - first.benchCpu) / span : Number.NaN,
      },
      rssMb: rank(
        inWindow.map((s) => s.rssMb).sort((a, b) => a - b),
        50,
      ),
    };
  }
}
