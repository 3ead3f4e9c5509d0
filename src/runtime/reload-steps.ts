/**
 * An optional probe of a reload's steps on the serving thread: bench/reload.ts sets `record`
 * and gets each step's CPU (process.threadCpuUsage, so other threads' work does not count).
 * Unset, a step costs one property read.
 */
export const reloadSteps: { record?: (step: string, cpuMs: number) => void } = {};

let last = 0;

/** Starts timing the steps of one reload. */
export function stepsStart(): void {
  if (reloadSteps.record) last = threadCpuMs();
}

/** Ends the step named `step`: what the thread spent since the previous mark. */
export function stepDone(step: string): void {
  if (!reloadSteps.record) return;
  const now = threadCpuMs();
  reloadSteps.record(step, now - last);
  last = now;
}

function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}
