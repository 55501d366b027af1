// Starts the local Redis (Debian redis-server) and MongoDB-wire server (mongo-java-server through
// our launcher) used by `npm start` when REDIS_URL / MONGODB_URI are not set, and by the tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// Works from the source tree (scripts/) and from the build (dist/scripts/).
const projectRoot = existsSync(join(here, '..', 'package.json')) ? resolve(here, '..') : resolve(here, '..', '..');
const mongoServerDir = join(projectRoot, 'scripts', 'mongo-server');
/** The compiled launcher and mongo-java-server's jars (scripts/ensure-deps.sh builds the launcher). */
export const mongoServerClasspath = `${join(mongoServerDir, 'classes')}:${join(mongoServerDir, 'lib', '*')}`;

export interface LocalService {
  url: string;
  port: number;
  pid: number;
  stop: () => Promise<void>;
  /** What the server printed before it was ready (the journal's recovery report, for one). */
  startupOutput?: string;
  /** Where the server writes its warnings and errors (MongoOptions.log), when it was given one. */
  logFile?: string;
}

export function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Whether a process with this id runs (signal 0 only asks). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

function waitForLine(
  child: ChildProcess,
  pattern: RegExp,
  what: string,
  timeoutMs = 60000,
): Promise<{ match: RegExpMatchArray; output: string }> {
  return new Promise((resolveLine, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start in ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(pattern);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        resolveLine({ match, output });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${output}`));
    });
  });
}

export interface RedisOptions {
  port?: number;
  /** Directory for the append-only file; without it nothing is written to disk. */
  dataDir?: string;
  detached?: boolean;
  /** More `redis-server` arguments (e.g. `['--maxmemory-policy', 'allkeys-lru']`). */
  args?: string[];
}

export async function startRedisServer(options: RedisOptions = {}): Promise<LocalService> {
  const port = options.port ?? (await findFreePort());
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--protected-mode', 'yes'];
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    args.push('--dir', options.dataDir, '--appendonly', 'yes', '--appendfsync', 'everysec');
  } else {
    args.push('--appendonly', 'no');
  }
  args.push(...(options.args ?? []));
  const child = spawn('redis-server', args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  await waitForLine(child, /Ready to accept connections/, 'redis-server');
  child.stdout?.resume();
  child.stderr?.resume();
  if (options.detached) child.unref();
  return { url: `redis://127.0.0.1:${port}`, port, pid: child.pid ?? 0, stop: () => stopChild(child) };
}

export interface MongoOptions {
  port?: number;
  /**
   * `memory` (lost when the server stops), `journalFile`: the memory backend with a write-ahead
   * journal, every write appended before it is acknowledged (survives kill -9), or `h2File`:
   * mongo-java-server's H2 backend (commits about once a second, no sparse unique indexes).
   */
  backend?: 'memory' | JournalBackend | { h2File: string };
  detached?: boolean;
  /** Extra JVM options, e.g. a heap ceiling (`-Xmx16g`; the JVM's default is a quarter of the machine's memory). */
  jvmOptions?: string[];
  /**
   * Where the server's warnings and errors go once it has started (its stderr). Without it they go
   * to a pipe nobody reads after start. The file is started afresh at each start and turns into
   * `<file>.1` past `maxBytes` (the previous one too), so at most twice `maxBytes` is kept.
   */
  log?: ServerLogFile;
}

export interface ServerLogFile {
  file: string;
  /** Default: the server's own, 4 MiB (LocalMongoServer.java). */
  maxBytes?: number;
}

/** Where the local tools keep their servers' logs unless told otherwise. */
export const LOCAL_LOG_DIRECTORY = join(projectRoot, '.local');

/**
 * The log file of a server a local tool starts for itself (`fuzz`, `bench`, `bench-journal`,
 * `drills`): `.local/mongo-server-<name>.log`, beside npm start's `mongo-server.log` and the tests'
 * `mongo-server-test.log`, so that what it said is still there after the run. A test of a tool
 * gives another directory: each start moves the file it finds to `.1`, and the developer's last
 * run's log must survive the tests.
 */
export function localServerLog(name: string, directory: string = LOCAL_LOG_DIRECTORY): ServerLogFile {
  return { file: join(directory, `mongo-server-${name}.log`) };
}

/**
 * mongo-java-server logs every connection opened and closed and every collection created at INFO:
 * only its warnings and errors are kept (a reply it could not encode, which closes the client's
 * connection; an exception on a connection; a command it does not know). Left out too: the errors a
 * command answers with (a duplicate key, mongoose's 'collection already exists' at each start),
 * which go back to the client and which the server printed with the whole command, users' data
 * included, and a stack trace; and its warning for each index it does not keep (every non-unique
 * one: dozens per database the service migrates), leaving that logger's errors.
 * slf4j-simple reads its settings from these system properties, so no file has to exist.
 */
const SERVER_LOG_LEVEL = [
  '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
  '-Dorg.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoWireProtocolHandler=off',
  '-Dorg.slf4j.simpleLogger.log.de.bwaldvogel.mongo.backend.AbstractMongoDatabase=error',
  '-Dorg.slf4j.simpleLogger.showDateTime=true',
  "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
];

function logArguments(log: ServerLogFile | undefined): string[] {
  if (!log) return [];
  try {
    mkdirSync(dirname(log.file), { recursive: true });
  } catch {
    // The server says why on its stderr and keeps logging there: the log is no reason not to start.
  }
  return [`-DlocalMongo.logFile=${log.file}`, ...(log.maxBytes ? [`-DlocalMongo.logMaxBytes=${log.maxBytes}`] : [])];
}

export const FSYNC_MODES = ['always', 'everysec', 'off'] as const;
export type FsyncMode = (typeof FSYNC_MODES)[number];

export interface JournalBackend {
  journalFile: string;
  /** When journal appends reach the disk (LOCAL_MONGO_FSYNC); the server's default is `everysec`. */
  fsync?: FsyncMode;
  /** Journal size past which it is compacted into a snapshot (default: DEFAULT_COMPACT_AFTER_BYTES). */
  compactAfterBytes?: number;
}

/** The server's own default (LocalMongoServer.java), repeated for the benchmark. */
export const DEFAULT_COMPACT_AFTER_BYTES = 256 * 1024;

/** LOCAL_MONGO_FSYNC, checked before anything starts; unset means the server's default. */
export function parseFsyncMode(value: string | undefined): FsyncMode | undefined {
  if (value === undefined || value === '') return undefined;
  if ((FSYNC_MODES as readonly string[]).includes(value)) return value as FsyncMode;
  throw new Error(`LOCAL_MONGO_FSYNC must be one of ${FSYNC_MODES.join(', ')} (got '${value}')`);
}

function backendArguments(backend: NonNullable<MongoOptions['backend']>): { args: string[]; jvm: string[]; file?: string } {
  if (backend === 'memory') return { args: ['memory'], jvm: [] };
  if ('journalFile' in backend) {
    const jvm = [
      ...(backend.fsync ? [`-DlocalMongo.fsync=${backend.fsync}`] : []),
      ...(backend.compactAfterBytes ? [`-DlocalMongo.compactAfterBytes=${backend.compactAfterBytes}`] : []),
    ];
    return { args: [`journal:${backend.journalFile}`], jvm, file: backend.journalFile };
  }
  return { args: [`h2:${backend.h2File}`], jvm: [], file: backend.h2File };
}

export async function startMongoServer(options: MongoOptions = {}): Promise<LocalService> {
  const { args: backendArgs, jvm: backendJvmOptions, file: dataFile } = backendArguments(options.backend ?? 'memory');
  if (dataFile) mkdirSync(dirname(dataFile), { recursive: true });
  const portFile = join(mongoServerDir, `.port-${process.pid}-${Date.now()}`);
  const child = spawn(
    'java',
    [
      '-Xss1m',
      '-XX:+UseSerialGC',
      ...(options.jvmOptions ?? []),
      ...backendJvmOptions,
      ...SERVER_LOG_LEVEL,
      ...logArguments(options.log),
      '-cp',
      mongoServerClasspath,
      'LocalMongoServer',
      '127.0.0.1',
      String(options.port ?? 0),
      ...backendArgs,
      portFile,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false },
  );
  const { output } = await waitForLine(child, /listening mongodb:\/\/[0-9.]+:([0-9]+)/, 'mongo-java-server');
  const port = Number(readFileSync(portFile, 'utf8'));
  rmSync(portFile, { force: true });
  child.stdout?.resume();
  child.stderr?.resume();
  if (options.detached) child.unref();
  return {
    url: `mongodb://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? 0,
    stop: () => stopChild(child),
    startupOutput: output,
    ...(options.log ? { logFile: options.log.file } : {}),
  };
}
