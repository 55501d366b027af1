// The processes each benchmark arm runs: the project's API and dispatch worker (their real entry
// points in dist/), the baseline app and bare worker, and the provider stub.
import { join } from 'node:path';
import type { Connection } from 'mongoose';
import { registerBenchClient } from './bench-clients.js';
import type { RegisterClientInput } from '../../core/clients/clients.service.js';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { toUserDoc, userModel } from '../../core/users/users.repository.js';
import {
  distDir,
  envString,
  findFreePort,
  httpOk,
  runSecrets,
  startNode,
  TWILIO_TEST_SID,
  UNLIMITED_RATE_LIMITS,
  type Infra,
  type NodeChild,
} from './bench-kit.js';

export interface ProviderStub extends NodeChild {
  url: string;
  /** Arrivals since the last reset: `[To, wall-clock ms]`. */
  arrivals: (reset?: boolean) => Promise<{ count: number; arrivals: [string, number][] }>;
}

export async function startProviderStub(delayMs = 0): Promise<ProviderStub> {
  const child = await startNode(
    'provider stub',
    join(distDir, 'bench', 'support', 'provider-stub-server.js'),
    { STUB_DELAY_MS: String(delayMs) },
    { ready: /stub listening (\d+)/ },
  );
  const url = `http://127.0.0.1:${child.match?.[1] ?? ''}`;
  return {
    ...child,
    url,
    arrivals: async (reset = false) =>
      (await (await fetch(`${url}/__arrivals${reset ? '?reset=1' : ''}`)).json()) as { count: number; arrivals: [string, number][] },
  };
}

/** Environment shared by the project's API and worker of one run. */
/** Where a process finds MongoDB and Redis (the servers themselves, or counting proxies). */
export interface Stores {
  mongo: string;
  redis: string;
}

export const storesOf = (infra: Infra): Stores => ({ mongo: infra.mongo.url, redis: infra.redis.url });

export function projectEnv(stores: Stores, db: string, prefix: string, stubUrl?: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    // The project's default level (one JSON line per request), to /dev/null-like pipe.
    LOG_LEVEL: envString('BENCH_LOG_LEVEL', 'info'),
    HOST: '127.0.0.1',
    MONGODB_URI: `${stores.mongo}/${db}`,
    REDIS_URL: stores.redis,
    QUEUE_PREFIX: prefix,
    ...runSecrets(),
    ...UNLIMITED_RATE_LIMITS,
    // Dispatch fairness (DISPATCH_FAIR_SHARE) as the operator would set it, to weigh its cost.
    ...(process.env.DISPATCH_FAIR_SHARE === undefined ? {} : { DISPATCH_FAIR_SHARE: process.env.DISPATCH_FAIR_SHARE }),
    ...(stubUrl
      ? {
          TWILIO_ACCOUNT_SID: TWILIO_TEST_SID,
          TWILIO_AUTH_TOKEN: 'bench-auth-token',
          TWILIO_FROM: '+15005550006',
          TWILIO_API_BASE_URL: stubUrl,
        }
      : {}),
  };
}

export interface ProjectApi extends NodeChild {
  url: string;
}

/**
 * Starts the API on a free port. Its public URL is its own address unless `publicUrl` names
 * another: several processes of one deployment share the address their tokens are issued for.
 */
export async function startProjectApi(env: Record<string, string>, nodeArgs: string[] = [], publicUrl?: string): Promise<ProjectApi> {
  const port = await findFreePort();
  const url = `http://127.0.0.1:${port}`;
  const child = await startNode(
    'project API',
    join(distDir, 'api', 'main.js'),
    { ...env, PORT: String(port), PUBLIC_URL: publicUrl ?? url },
    { readyCheck: () => httpOk(`${url}/readyz`), nodeArgs },
  );
  return { ...child, url };
}

/**
 * Starts one of the project's worker processes (its real entry point in dist/workers/<name>/),
 * ready once it logs that its queue's worker runs.
 */
async function startWorkerProcess(name: 'dispatch' | 'enrollment', env: Record<string, string>, nodeArgs: string[]): Promise<NodeChild> {
  return startNode(
    `project ${name} worker`,
    join(distDir, 'workers', name, 'main.js'),
    { ...env, LOG_LEVEL: 'info', PUBLIC_URL: 'http://127.0.0.1:9' },
    { ready: new RegExp(`${name} worker running`), nodeArgs },
  );
}

/** The dispatch worker: renders and sends deliveries. */
export const startProjectWorker = (env: Record<string, string>, nodeArgs: string[] = []): Promise<NodeChild> =>
  startWorkerProcess('dispatch', env, nodeArgs);

/** The enrollment worker: turns enrollment jobs into activation deliveries and dispatch jobs. */
export const startProjectEnrollmentWorker = (env: Record<string, string>, nodeArgs: string[] = []): Promise<NodeChild> =>
  startWorkerProcess('enrollment', env, nodeArgs);

export interface BaselineApp extends NodeChild {
  url: string;
}

export async function startBaselineApp(stores: Stores, db: string, prefix: string): Promise<BaselineApp> {
  const child = await startNode(
    'baseline app',
    join(distDir, 'bench', 'support', 'baseline-app.js'),
    {
      MONGODB_URI: `${stores.mongo}/${db}`,
      REDIS_URL: stores.redis,
      QUEUE_PREFIX: prefix,
      PORT: '0',
      BASELINE_WORK: envString('BASELINE_WORK', 'minimal'),
    },
    { ready: /baseline listening (\d+)/ },
  );
  return { ...child, url: `http://127.0.0.1:${child.match?.[1] ?? ''}` };
}

/** Users of the baseline app's own collection for BASELINE_WORK=required: bench-user-i with the mobile number the project's users have. */
export async function insertBaselineUsers(db: Connection, n: number): Promise<void> {
  const users = db.collection('baseline_users');
  for (let from = 0; from < n; from += 1000) {
    const ops = [];
    for (let i = from; i < Math.min(n, from + 1000); i++)
      ops.push({
        updateOne: {
          filter: { userId: benchUserId(i) },
          update: { $set: { status: 'ACTIVE', mobileNumber: benchMobile(i) } },
          upsert: true,
        },
      });
    await users.bulkWrite(ops, { ordered: false });
  }
}

export async function startBareWorker(
  redisUrl: string,
  prefix: string,
  stubUrl: string,
  concurrency: number,
  mongoUri?: string,
  rowsCollection = 'deliveries',
): Promise<NodeChild> {
  return startNode(
    'bare worker',
    join(distDir, 'bench', 'support', 'bare-worker.js'),
    {
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      STUB_URL: stubUrl,
      CONCURRENCY: String(concurrency),
      BARE_CLIENT: envString('BARE_CLIENT', 'fetch'),
      ...(mongoUri ? { BARE_WORK: 'required', MONGODB_URI: mongoUri, ROWS_COLLECTION: rowsCollection } : {}),
      TWILIO_ACCOUNT_SID: TWILIO_TEST_SID,
      TWILIO_AUTH_TOKEN: 'bench-auth-token',
    },
    { ready: /bare worker ready/ },
  );
}

export const benchMobile = (i: number) => `+1555${String(i).padStart(7, '0')}`;
export const benchUserId = (i: number) => `bench-user-${i}`;

/**
 * Inserts users bench-user-0 … bench-user-(n-1) of `enterpriseId`, each with its own mobile number
 * (`mobileOf(i)`; other enterprises' users need other numbers so the stub can tell them apart).
 */
export async function insertBenchUsers(
  mongo: Connection,
  n: number,
  enterpriseId = 'default',
  mobileOf: (i: number) => string = benchMobile,
): Promise<void> {
  const Users = await userModel(mongo);
  const now = new Date();
  const batch = 1000;
  for (let from = 0; from < n; from += batch) {
    const docs = [];
    for (let i = from; i < Math.min(n, from + batch); i++) {
      const mobileNumber = mobileOf(i);
      docs.push(
        toUserDoc({
          enterpriseId,
          userId: benchUserId(i),
          loginId: benchUserId(i),
          primaryGroup: 'retail',
          secondaryGroups: [],
          firstName: 'Bench',
          lastName: 'User',
          status: 'ACTIVE',
          sourceType: 'SVC',
          clientId: 'bench',
          mobileNumber,
          createdAt: now,
          updatedAt: now,
        }),
      );
    }
    await Users.insertMany(docs, { ordered: false });
  }
}

/** A confidential client with `scopes` (of `enterpriseId`) and an access token from the real token endpoint. */
export async function projectAccessToken(
  apiUrl: string,
  mongo: Connection,
  enterpriseId = 'default',
  scopes: RegisterClientInput['scopes'] = ['otp'],
): Promise<string> {
  const { client, clientSecret } = await registerBenchClient(mongo, {
    name: enterpriseId === 'default' ? 'bench client' : `bench client ${enterpriseId}`,
    enterpriseId,
    scopes,
    allowedIps: ['127.0.0.1/32', '::1/128'],
  });
  const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(clientSecret ?? '')}`).toString('base64');
  const res = await fetch(`${apiUrl}/svc/authserver/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

export { connectMongo };

/** The OTP request of every benchmark: SMS only through otp_sms, defaults otherwise. */
export const otpRequestBody = (userId: string) => ({
  userId,
  dispatchOptions: { SMS: 'otp_sms' },
  dynamicMacros: {},
  attempts: 3,
  expiresIn: 300,
});

/** An enrollment that sends an activation code by SMS only (no emailId, no predefinedCode). */
export const enrollmentRequestBody = (userId: string, mobileNumber: string, primaryGroup = 'retail') => ({
  userId,
  primaryGroup,
  firstName: 'Bench',
  lastName: 'Enrollee',
  mobileNumber,
});
