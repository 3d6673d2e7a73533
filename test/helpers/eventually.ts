/** Polls until `check` holds: every 50 ms, failing after `ms` with what was awaited. */
export async function eventually(check: () => boolean, ms: number, what = 'the condition'): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Like {@link eventually} for a check that has to ask something (a process, a socket): every 100 ms, one at a time. */
export async function eventuallyAsync(check: () => Promise<boolean>, ms: number, what = 'the condition'): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
