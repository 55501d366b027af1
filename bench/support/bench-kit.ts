// Shared plumbing of the benchmarks: local Redis and MongoDB-wire server, child processes on
// loopback, machine facts, statistics and result files. Nothing here is used by the service.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem, platform, release } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import {
  findFreePort,
  localServerLog,
  startMongoServer,
  startRedisServer,
  type LocalService,
  type MongoOptions,
} from '../../scripts/local-services.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root, from bench/support (sources) or dist/bench/support (build). */
export const projectRoot = resolve(here, '..', '..', ...(here.includes(`${'/'}dist${'/'}`) ? ['..'] : []));
export const distDir = join(projectRoot, 'dist');

export { findFreePort };

/** An integer knob from the environment (documented default otherwise). */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got '${raw}'`);
  return value;
}

export function envString(name: string, fallback: string): string {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes. */
export const wallMs = () => performance.timeOrigin + performance.now();

export interface Infra {
  redis: LocalService;
  mongo: LocalService;
  stop: () => Promise<void>;
}

/**
 * The stores a benchmark runs on; the MongoDB-wire server's warnings and errors go to
 * `mongo-server-bench.log` in `logDirectory` (`.local` unless a test gives its own).
 */
export async function startInfra(mongoOptions: MongoOptions = {}, logDirectory?: string): Promise<Infra> {
  const [redis, mongo] = await Promise.all([
    startRedisServer(),
    startMongoServer({ log: localServerLog('bench', logDirectory), ...mongoOptions }),
  ]);
  return { redis, mongo, stop: async () => void (await Promise.allSettled([redis.stop(), mongo.stop()])) };
}

export interface NodeChild {
  name: string;
  child: ChildProcess;
  /** Output seen so far (bounded), for error reports. */
  output: () => string;
  stop: () => Promise<void>;
}

/**
 * Starts `node <script>` with `env` and resolves once its output matches `ready` (or `readyCheck`
 * succeeds). Output goes to a file under .local/bench-logs/ (not a pipe), so reading it never
 * costs the benchmark process CPU while it drives load; its tail is shown if the child fails.
 */
export async function startNode(
  name: string,
  script: string,
  env: Record<string, string>,
  options: { ready?: RegExp; readyCheck?: () => Promise<boolean>; nodeArgs?: string[]; timeoutMs?: number } = {},
): Promise<NodeChild & { match?: RegExpMatchArray }> {
  const logDir = join(projectRoot, '.local', 'bench-logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${name.replace(/[^A-Za-z0-9]+/g, '-')}-${process.pid}-${Date.now()}.log`);
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const output = () => {
    try {
      return readFileSync(logFile, 'utf8').slice(-65536);
    } catch {
      return '';
    }
  };
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + (options.timeoutMs ?? 60000);
  let match: RegExpMatchArray | undefined;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${output()}`);
    if (options.ready) {
      const m = output().match(options.ready);
      if (m) {
        match = m;
        break;
      }
    }
    if (options.readyCheck && (await options.readyCheck().catch(() => false))) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} not ready in time:\n${output()}`);
    }
    await sleep(100);
  }
  return { name, child, output, stop, match };
}

export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url);
  await res.arrayBuffer();
  return res.ok;
}

/** Secrets and keys of one benchmark run (fresh each time, never committed). */
export function runSecrets() {
  return {
    ADMIN_TOKEN: randomBytes(24).toString('hex'),
    OTP_HMAC_KEY: randomBytes(32).toString('base64url'),
    OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  };
}

/** Limits high enough never to bite during a benchmark (the checks themselves still run). */
export const UNLIMITED_RATE_LIMITS = {
  RATE_LIMIT_OTP_PER_USER: '1000000000',
  RATE_LIMIT_OTP_PER_CLIENT: '1000000000',
  RATE_LIMIT_VALIDATE_PER_CLIENT: '1000000000',
  RATE_LIMIT_OTP_PER_ENTERPRISE: '1000000000',
  RATE_LIMIT_NOTIFICATIONS_PER_ENTERPRISE: '1000000000',
  RATE_LIMIT_ENROLLMENT_MESSAGES_PER_CLIENT: '1000000000',
  RATE_LIMIT_ENROLLMENT_MESSAGES_PER_ENTERPRISE: '1000000000',
  RATE_LIMIT_NOTIFICATIONS_PER_USER: '1000000000',
  RATE_LIMIT_NOTIFICATIONS_PER_CLIENT: '1000000000',
  RATE_LIMIT_SIGN_IN_STARTS_PER_IP: '1000000000',
};

export const TWILIO_TEST_SID = `AC${'0123456789abcdef'.repeat(2)}`;

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Nearest-rank percentile of unsorted values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank];
}

export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

export function machineInfo() {
  const list = cpus();
  return {
    cpuModel: list[0]?.model ?? 'unknown',
    cores: list.length,
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    freeMemoryGiBAtStart: round(freemem() / 2 ** 30, 1),
    loadAverageAtStart: loadavg().map((v) => round(v, 2)),
    node: process.version,
    os: `${platform()} ${release()}`,
  };
}

/**
 * Writes bench/results/<name>[-<RESULT_SUFFIX>].json in the source tree (committed) and returns
 * its path; the suffix keeps runs with non-default knobs apart from the reference figures.
 */
export function writeResult(name: string, result: unknown): string {
  const dir = join(projectRoot, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const suffix = process.env.RESULT_SUFFIX ? `-${process.env.RESULT_SUFFIX.replace(/[^A-Za-z0-9_-]/g, '')}` : '';
  const file = join(dir, `${name}${suffix}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

/** A plain-text table with right-aligned columns. */
export function printTable(headers: string[], rows: (string | number)[][]): void {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => c.padStart(widths[i])).join('  ');
  console.log(line(cells[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) console.log(line(r));
}

/** Runs `body`, then every cleanup in reverse order even when it threw; exits non-zero on error. */
export async function runBenchmark(name: string, body: (cleanup: (fn: () => Promise<unknown>) => void) => Promise<void>): Promise<void> {
  const cleanups: (() => Promise<unknown>)[] = [];
  let failed = false;
  const onSignal = () => {
    failed = true;
    void Promise.allSettled(cleanups.reverse().map((fn) => fn())).then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await body((fn) => cleanups.push(fn));
  } catch (err) {
    failed = true;
    console.error(`[${name}] failed:`, err);
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch((err: unknown) => console.error(`[${name}] cleanup:`, err));
  }
  process.exit(failed ? 1 : 0);
}

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux); NaN elsewhere. */
export function processCpuMs(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

/** Measures the CPU each named process spends while `body` runs. */
export async function withCpu<T>(
  pids: Record<string, number | undefined>,
  body: () => Promise<T>,
): Promise<{ value: T; cpuMs: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpuMs(pid)]));
  const value = await body();
  const cpuMs = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpuMs(pid) - before[k]]));
  return { value, cpuMs };
}

/**
 * Waits until the processes together use less than `maxMsPerSecond` of CPU per second (sampled
 * every 250 ms), or `timeoutMs` passes: the set-up of a run (a bulk load, a JVM's garbage
 * collection after it) must not be billed to the run.
 */
export async function waitUntilIdle(pids: (number | undefined)[], maxMsPerSecond = 40, timeoutMs = 10000): Promise<void> {
  const total = () => pids.reduce<number>((sum, pid) => sum + (processCpuMs(pid) || 0), 0);
  const deadline = Date.now() + timeoutMs;
  let before = total();
  while (Date.now() < deadline) {
    await sleep(250);
    const now = total();
    if ((now - before) * 4 < maxMsPerSecond) return;
    before = now;
  }
}
