// Fuzzes the running service against its own OpenAPI document with schemathesis (run by
// scripts/fuzz-api.sh, which installs schemathesis into .local/). Starts its own Redis and
// MongoDB-wire server, the API and every worker, registers a client through the admin API, then
// runs schemathesis three times: with credentials (the admin token for admin operations, a
// client's access token for enterprise operations), without any, and on /v1/me* with the token of
// a person signed in through the login pages. Exits non-zero when any run fails.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApi } from '../api/main.js';
import { loadConfig } from '../core/platform/config/config.js';
import { createLogger } from '../core/platform/logger/logger.js';
import { projectRoot } from '../core/platform/project-root.js';
import { startAllWorkers } from '../workers/all.js';
import { userTokenThroughLoginPages } from './fuzz/user-sign-in.js';
import { startFuzzStores } from './fuzz/fuzz-stores.js';
import { findFreePort } from './local-services.js';

const fuzzDir = join(projectRoot, '.local', 'fuzz');
const schemathesis = join(projectRoot, '.local', 'fuzz-venv', 'bin', 'schemathesis');
// Bounded so both runs together take a few minutes on a 2-core machine.
const MAX_EXAMPLES = process.env.FUZZ_MAX_EXAMPLES ?? '50';

async function json(res: Response): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** A client with every scope, allowed from loopback, and an access token for it. */
async function clientToken(baseUrl: string, adminToken: string): Promise<string> {
  const created = await json(
    await fetch(`${baseUrl}/admin/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'fuzz', scopes: ['otp', 'users', 'notifications'], allowedIps: ['127.0.0.1/32', '::1/128'] }),
    }),
  );
  const basic = Buffer.from(`${String(created.client_id)}:${String(created.client_secret)}`).toString('base64');
  const token = await json(
    await fetch(`${baseUrl}/svc/authserver/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    }),
  );
  return String(token.access_token);
}

/**
 * The user of the document's Generate OTP example, so that the examples phase creates a real OTP
 * and the stateful phase follows its links to status and validation.
 */
async function exampleUser(baseUrl: string, adminToken: string, token: string): Promise<void> {
  const post = (path: string, bearer: string, body: unknown) =>
    fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const group = await post('/admin/groups', adminToken, { name: 'fuzz' });
  if (group.status !== 201) throw new Error(`group: ${group.status}`);
  const user = await post('/v1/users', token, {
    userId: 'alice',
    primaryGroup: 'fuzz',
    firstName: 'Alice',
    lastName: 'Example',
    emailId: 'alice@example.com',
    mobileNumber: '+15550001111',
  });
  if (user.status !== 201) throw new Error(`user: ${user.status} ${await user.text()}`);
}

/**
 * One schemathesis run; resolves with its exit status. Its report goes to a log file and is
 * printed only when the run fails: its closing banner looks like pytest's ("3 warnings in 54s"),
 * and log readers that look for a test runner's last line would take it for a run of no test.
 */
async function runSchemathesis(label: string, baseUrl: string, configFile: string, extraArgs: string[] = []): Promise<number> {
  const args = [
    '--config-file',
    configFile,
    'run',
    `${baseUrl}/openapi.json`,
    '--checks',
    'all',
    '--max-examples',
    MAX_EXAMPLES,
    '--seed',
    process.env.FUZZ_SEED ?? '1',
    '--workers',
    '2',
    '--request-timeout',
    '10',
    '--report',
    'junit',
    '--report-dir',
    join(fuzzDir, label),
    // An event stream answers forever, past any request timeout: tested on its own
    // (test/integration/notifications-stream.test.ts).
    '--exclude-path',
    '/v1/me/notifications/stream',
    ...extraArgs,
  ];
  const logFile = join(fuzzDir, `${label}.log`);
  const log = openSync(logFile, 'w');
  const child = spawn(schemathesis, args, { stdio: ['ignore', log, log] });
  const code = await new Promise<number>((resolve) => child.once('exit', (exitCode) => resolve(exitCode ?? 1)));
  closeSync(log);
  const output = readFileSync(logFile, 'utf8');
  const cases = /Test cases:\s*(\d+) generated/.exec(output)?.[1] ?? '?';
  process.stdout.write(`schemathesis ${label}: exit ${code}, ${cases} generated cases, report in ${logFile}\n`);
  if (code !== 0) process.stdout.write(output.replace(/^/gm, `  [${label}] `) + '\n');
  return code;
}

async function main(): Promise<number> {
  mkdirSync(fuzzDir, { recursive: true });
  const { redis, mongo } = await startFuzzStores();
  // Interrupted (Ctrl-C, a CI timeout): the servers started here must not outlive the run.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void Promise.all([redis.stop(), mongo.stop()]).finally(() => process.exit(130));
    });
  }
  const port = await findFreePort();
  const adminToken = randomBytes(24).toString('base64url');
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    MONGODB_URI: `${mongo.url}/fuzz`,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: 'fuzz',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    ADMIN_TOKEN: adminToken,
    OTP_HMAC_KEY: randomBytes(32).toString('base64url'),
    OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    // Generous limits: the fuzzer should reach the handlers, not spend its examples on 429s.
    RATE_LIMIT_OTP_PER_USER: '100000',
    RATE_LIMIT_OTP_PER_CLIENT: '100000',
    RATE_LIMIT_VALIDATE_PER_CLIENT: '100000',
    RATE_LIMIT_OTP_PER_ENTERPRISE: '100000',
    RATE_LIMIT_NOTIFICATIONS_PER_ENTERPRISE: '100000',
    RATE_LIMIT_ENROLLMENT_MESSAGES_PER_CLIENT: '100000',
    RATE_LIMIT_ENROLLMENT_MESSAGES_PER_ENTERPRISE: '100000',
    RATE_LIMIT_NOTIFICATIONS_PER_USER: '100000',
    RATE_LIMIT_NOTIFICATIONS_PER_CLIENT: '100000',
    RATE_LIMIT_ACTIVATE_PER_IP: '100000',
    RATE_LIMIT_SIGN_IN_STARTS_PER_IP: '100000',
    RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_CLIENT_ADDRESS: '100000',
    RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_ADDRESS: '100000',
  });
  const logger = createLogger({ level: config.logLevel, name: 'fuzz' });
  const api = await startApi(config, logger);
  const workers = await startAllWorkers(config, logger);
  let status = 1;
  try {
    const token = await clientToken(api.url, adminToken);
    await exampleUser(api.url, adminToken, token);
    const person = await userTokenThroughLoginPages(api.url, adminToken, token, 'fuzz');
    const rules = readFileSync(join(projectRoot, 'scripts', 'fuzz', 'schemathesis-rules.toml'), 'utf8');
    const withAuth = join(fuzzDir, 'with-credentials.toml');
    const credentials = `[auth.openapi.adminToken]\nbearer = "${adminToken}"\n\n[auth.openapi.oauth2]\nbearer = "${token}"\n\n`;
    writeFileSync(withAuth, credentials + rules, { mode: 0o600 });
    const withoutAuth = join(fuzzDir, 'without-credentials.toml');
    writeFileSync(withoutAuth, rules);
    const asUser = join(fuzzDir, 'user-token.toml');
    // The answer and dismiss operations get the person's own notifications (a generated uuid is
    // only ever 404): answering the number-matching one without its number is the documented 422.
    const personsNotifications =
      `\n[[operations]]\ninclude-name = "POST /v1/me/notifications/{uuid}/action"\nparameters = { uuid = "${person.numberMatchNotification}" }\n` +
      `\n[[operations]]\ninclude-name = "POST /v1/me/notifications/{uuid}/dismiss"\nparameters = { uuid = "${person.plainNotification}" }\n`;
    writeFileSync(asUser, `[auth.openapi.bearerToken]\nbearer = "${person.accessToken}"\n\n` + rules + personsNotifications, {
      mode: 0o600,
    });
    // FUZZ_RUNS picks some of the runs (comma-separated labels) while working on one of them.
    const chosen = (process.env.FUZZ_RUNS ?? 'user-token,with-credentials,without-credentials').split(',');
    const runs: [string, string, string[]][] = [
      // The person's run first: the enterprise run may change or remove users, the person included.
      ['user-token', asUser, ['--include-path-regex', '^/v1/me']],
      ['with-credentials', withAuth, []],
      ['without-credentials', withoutAuth, []],
    ];
    const started = Date.now();
    const exits: string[] = [];
    status = 0;
    for (const [label, configFile, extraArgs] of runs.filter(([label]) => chosen.includes(label))) {
      const code = await runSchemathesis(label, api.url, configFile, extraArgs);
      exits.push(`${label} exit ${code}`);
      if (code !== 0) status = 1;
    }
    process.stdout.write(`\nfuzzing: ${((Date.now() - started) / 1000).toFixed(0)} s, ${exits.join(', ')}\n`);
    // A request that failed with a closed connection or a 503 may be the local server's doing.
    if (status !== 0) process.stdout.write(`the MongoDB-wire server's warnings and errors: ${mongo.logFile ?? 'not kept'}\n`);
  } finally {
    await workers.shutdown();
    await api.shutdown();
    await Promise.all([redis.stop(), mongo.stop()]);
  }
  return status;
}

main().then(
  (status) => process.exit(status),
  (err: unknown) => {
    console.error('fuzzing failed to run:', err);
    process.exit(1);
  },
);
