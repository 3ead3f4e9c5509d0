/**
 * What Linux says about a process: CPU time and memory from /proc (proc(5)). CPU time is the
 * benchmark's main measure because, unlike wall-clock throughput, it hardly moves when other
 * work shares the machine.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Clock ticks per second, the unit of utime and stime (sysconf(_SC_CLK_TCK), 100 almost everywhere). */
export const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of a process (all its threads) in microseconds: fields 14 and 15 of /proc/<pid>/stat. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces and parentheses: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
  return Number(kb ?? 0) / 1024;
}

/** Resident set size now, in MB. */
export const rssMb = (pid: number): number => statusMb(pid, 'VmRSS');

/**
 * Peak RSS (VmHWM) is exact, unlike sampling, but counts from the process's start; writing 5 to
 * clear_refs (Linux ≥ 4.0) restarts it from the current RSS, so each run gets its own peak.
 * Returns false where that is not allowed, and the caller samples instead.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Peak RSS in MB: VmHWM when it could be reset, else the highest of the samples taken every 100 ms. */
export class PeakRss {
  #pid: number;
  #exact: boolean;
  #sampled: number;
  #timer: NodeJS.Timeout;

  constructor(pid: number) {
    this.#pid = pid;
    this.#exact = resetPeakRss(pid);
    this.#sampled = rssMb(pid);
    this.#timer = setInterval(() => (this.#sampled = Math.max(this.#sampled, rssMb(pid))), 100);
  }

  stop(): number {
    clearInterval(this.#timer);
    const sampled = Math.max(this.#sampled, rssMb(this.#pid));
    return this.#exact ? Math.max(sampled, statusMb(this.#pid, 'VmHWM')) : sampled;
  }
}

/** SYNs dropped machine-wide because a listen queue was full (TcpExt ListenOverflows, /proc/net/netstat). */
export function listenOverflows(): number {
  const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n');
  const at = lines.findIndex((l) => l.startsWith('TcpExt:'));
  const names = lines[at]?.split(' ') ?? [];
  const values = lines[at + 1]?.split(' ') ?? [];
  return Number(values[names.indexOf('ListenOverflows')] ?? 0);
}

/**
 * One line about the machine for the report: CPU model, clock, caches, cores, memory, kernel. The
 * same code costs several times more on one CPU kind than another (issue 24): a figure without its
 * machine means nothing.
 */
export function machine(): string {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? 'unknown CPU';
  const mhz = Number(/cpu MHz\s*:\s*([\d.]+)/.exec(cpuinfo)?.[1]);
  const clock = Number.isFinite(mhz) ? ` at ${(mhz / 1000).toFixed(2)} GHz` : '';
  const cores = (cpuinfo.match(/^processor\s*:/gm) ?? []).length;
  const kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  const memGb = Number(/MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1024 / 1024;
  return `${model}${clock}, ${caches(cpuinfo)}${cores} cores, ${memGb.toFixed(0)} GB, Linux ${kernel}`;
}

/** The caches of CPU 0 from sysfs (L1d 32K, L2 512K, L3 16384K), else /proc/cpuinfo's one "cache size"; '' if neither says. */
function caches(cpuinfo: string): string {
  const dir = '/sys/devices/system/cpu/cpu0/cache';
  const levels: string[] = [];
  try {
    for (const index of readdirSync(dir)
      .filter((n) => n.startsWith('index'))
      .sort()) {
      const read = (f: string) => readFileSync(`${dir}/${index}/${f}`, 'utf8').trim();
      const type = read('type');
      if (type === 'Instruction') continue;
      levels.push(`L${read('level')}${type === 'Data' ? 'd' : ''} ${read('size')}`);
    }
  } catch {
    // No sysfs cache description (some VMs): fall back to cpuinfo.
  }
  if (levels.length) return `caches ${levels.join(', ')}, `;
  const fromCpuid = cpuidCaches();
  if (fromCpuid) return `caches ${fromCpuid} (CPUID, getconf), `;
  const size = /cache size\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim();
  return size ? `cache ${size}, ` : '';
}

/**
 * The cache sizes glibc reads from CPUID (getconf LEVEL1_DCACHE_SIZE …), for VMs without sysfs
 * cache entries; what a hypervisor passes through may be the host's, so it is labelled as such.
 */
function cpuidCaches(): string {
  try {
    const all = execFileSync('getconf', ['-a'], { encoding: 'utf8' });
    const size = (name: string) => Number(new RegExp(`^${name}\\s+(\\d+)`, 'm').exec(all)?.[1] ?? 0);
    const kb = (bytes: number) => (bytes >= 1 << 20 ? `${bytes / (1 << 20)}M` : `${bytes / 1024}K`);
    const levels = [
      ['L1d', size('LEVEL1_DCACHE_SIZE')],
      ['L2', size('LEVEL2_CACHE_SIZE')],
      ['L3', size('LEVEL3_CACHE_SIZE')],
    ] as const;
    return levels
      .filter(([, bytes]) => bytes > 0)
      .map(([level, bytes]) => `${level} ${kb(bytes)}`)
      .join(', ');
  } catch {
    return '';
  }
}
