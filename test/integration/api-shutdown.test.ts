import { Agent, get } from 'node:http';
import { findFreePort } from '../../scripts/local-services.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody } from '../support/otp-helpers.js';
import { startKeepAliveLoad, type LoadOutcome } from '../support/keep-alive-load.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { spawnProcessEntry, waitForOutput } from '../support/worker-process.js';

// A reset under shutdown is a race between a client reusing a keep-alive connection and the
// server closing it: one clean run proves little, so each process is stopped several times.
const ROUNDS = 3;
const LANES = 20;
const DRAIN_WINDOW_MS = 1500;

/** Errors that mean a request was cut on its connection rather than answered or refused. */
const RESET_ERRORS = ['ECONNRESET', 'EPIPE', 'socket hang up'];

/** GET on a connection of its own (as a load balancer's probe), closed after the answer. */
function statusOnFreshConnection(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', () => resolve(undefined));
  });
}

/** GET over `agent`; says whether the request went on a connection opened earlier. */
function getOn(agent: Agent, url: string): Promise<{ status?: number; connectionClose?: boolean; reusedSocket?: boolean; error?: string }> {
  return new Promise((resolve) => {
    const req = get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode, connectionClose: res.headers.connection === 'close', reusedSocket: req.reusedSocket }),
      );
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

interface Round {
  exit: { code: number | null; signal: NodeJS.Signals | null };
  outcomes: LoadOutcome[];
  readinessAfterSignal: number | undefined;
  /** A request sent after the signal on a keep-alive connection that was idle when it came. */
  idleConnectionAfterSignal: Awaited<ReturnType<typeof getOn>>;
  output: string;
}

describe('Shutdown under keep-alive load: no request is reset', () => {
  let service: TestService;
  let token: string;

  beforeAll(async () => {
    service = await startTestService('apishutdown', {
      RATE_LIMIT_OTP_PER_USER: '100000',
      RATE_LIMIT_OTP_PER_CLIENT: '100000',
      RATE_LIMIT_OTP_PER_ENTERPRISE: '100000',
    });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'drain', mobileNumber: '+15550001234' });
  });
  afterAll(async () => {
    await service.close();
  });

  /** Starts the entry, loads it with keep-alive lanes, sends SIGTERM mid-load and records what every request got. */
  async function stopUnderLoad(entry: string, readyText: string): Promise<Round> {
    const port = await findFreePort();
    const proc = spawnProcessEntry(entry, {
      ...service.env,
      PORT: String(port),
      SHUTDOWN_DRAIN_WINDOW_MS: String(DRAIN_WINDOW_MS),
    });
    const url = `http://127.0.0.1:${port}`;
    let load: ReturnType<typeof startKeepAliveLoad> | undefined;
    try {
      await waitForOutput(proc, readyText, 60000);
      const running = startKeepAliveLoad({
        url: `${url}/v1/svc-otp`,
        lanes: LANES,
        headers: { authorization: `Bearer ${token}` },
        body: () => otpBody('drain'),
      });
      load = running;
      await eventually(async () => (running.outcomes.filter((o) => o.status === 200).length >= 100 ? true : undefined), 30000, 5);
      const idle = new Agent({ keepAlive: true, maxSockets: 1 });
      await getOn(idle, `${url}/healthz`);
      proc.child.kill('SIGTERM');
      // Readiness turns at once, on a fresh connection, while requests on open ones are still served.
      const readinessAfterSignal = await eventually(
        async () => {
          const status = await statusOnFreshConnection(`${url}/readyz`);
          return status === 503 ? status : undefined;
        },
        DRAIN_WINDOW_MS,
        20,
      ).catch(() => undefined);
      const idleConnectionAfterSignal = await getOn(idle, `${url}/healthz`);
      idle.destroy();
      const exit = await proc.exited;
      running.stop();
      await running.finished;
      return { exit, outcomes: running.outcomes, readinessAfterSignal, idleConnectionAfterSignal, output: proc.output() };
    } finally {
      load?.stop();
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    }
  }

  /** What a round showed, in one object so a failure shows every figure at once. */
  function summarize(round: Round) {
    return {
      exit: round.exit,
      readinessAfterSignal: round.readinessAfterSignal,
      resets: round.outcomes.filter((o) => o.error !== undefined && RESET_ERRORS.includes(o.error)).length,
      // Every request answered 200: the lanes were told to go (Connection: close) during the
      // drain window and never met a closed connection or a closed listener.
      notAnswered200: round.outcomes.filter((o) => o.status !== 200).map((o) => o.error ?? o.status),
      lanesToldToGo: round.outcomes.filter((o) => o.connectionClose).length,
      // Served, on its open connection, and told to go: not closed under the client.
      idleConnectionAfterSignal: round.idleConnectionAfterSignal,
      shutdownStepFailed: round.output.includes('shutdown step failed'),
    };
  }

  const clean = {
    exit: { code: 0, signal: null },
    readinessAfterSignal: 503,
    resets: 0,
    notAnswered200: [],
    lanesToldToGo: LANES,
    idleConnectionAfterSignal: { status: 200, connectionClose: true, reusedSocket: true },
    shutdownStepFailed: false,
  };

  async function stopRepeatedly(entry: string, readyText: string): Promise<void> {
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(summarize(await stopUnderLoad(entry, readyText)));
    expect(rounds).toEqual(Array.from({ length: ROUNDS }, () => clean));
  }

  test(`the web role (api/main.js), stopped ${ROUNDS} times with ${LANES} keep-alive clients: readiness 503 at once, every request answered 200, 0 resets, exit 0`, async () => {
    await stopRepeatedly('api/main.js', 'API listening');
  }, 180000);

  test(`the all-in-one runner (npm start: scripts/start-local.js), stopped ${ROUNDS} times with ${LANES} keep-alive clients: readiness 503 at once, every request answered 200, 0 resets, exit 0`, async () => {
    await stopRepeatedly('scripts/start-local.js', 'svc-identity is running');
  }, 180000);
});
