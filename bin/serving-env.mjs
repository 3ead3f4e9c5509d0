/**
 * The V8 flags and the environment the gateway serves with, given by whatever starts it (the bin
 * when it re-runs itself, npm start, the benchmark's servers, which give the hop the same).
 * Plain JavaScript (ES2019) for any Node; a leaf.
 */

/**
 * The heap grows in small steps, which keeps RSS under load near 150 MB at no measurable
 * throughput cost and without a hard heap cap. Optimizing compiles run on the serving thread, one
 * at a time: queued concurrently (up to 8 jobs on helper threads), their compiler zones left 20 MB
 * of freed memory resident in malloc's arenas (RSS under load 148–160 against 130–135 MB, CPU per
 * request unchanged, `bench/ab.ts`); the compiles are a warm-up's work. The Dockerfile and the
 * systemd unit spell the same flags out.
 */
export const SERVE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=25', '--no-concurrent-recompilation'];

/**
 * The environment a serving gateway runs with. glibc raises its mmap threshold whenever a block
 * above it is freed (up to 32 MB), so after a burst of large short-lived blocks, such as those of
 * V8's compiler and GC threads, later ones come from the threads' malloc arenas and stay
 * resident. A threshold set once disables that adjustment: blocks of 1 MiB and more are mapped
 * and go back to the system when freed (measured with `bench/ab.ts` against the default: 16-20 MB
 * less RSS under load, CPU per request within the run-to-run noise). A value the user set wins;
 * other C libraries ignore the variable.
 */
export function servingEnv(env) {
  if (process.platform !== 'linux' || env.MALLOC_MMAP_THRESHOLD_ !== undefined) return env;
  return Object.assign({}, env, { MALLOC_MMAP_THRESHOLD_: '1048576' });
}
