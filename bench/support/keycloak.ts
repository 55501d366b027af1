// Keycloak as a benchmark arm: its Quarkus distribution from Maven Central, installed once into
// .local/keycloak/ (never committed), started in production mode (`kc.sh start --optimized`) with
// the embedded dev-file database, HTTP on loopback only. Each start gets a fresh database and a
// realm made through the admin API: one confidential client with a service account (client
// credentials and the authorization-code flow with PKCE) and password users for the browser flow.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { envString, findFreePort, projectRoot, sleep } from './bench-kit.js';

/** 26.7.3 is the newest distribution the registry here serves (26.7.4 is not). */
export const KEYCLOAK_VERSION = envString('KEYCLOAK_VERSION', '26.7.3');
export const KEYCLOAK_REALM = 'bench';
export const KEYCLOAK_CLIENT_ID = 'bench-app';
export const keycloakUser = (i: number) => ({ username: `bench-user-${i}`, password: `bench-password-${i}` });

const keycloakDir = join(projectRoot, '.local', 'keycloak');
const homeOf = (version: string) => join(keycloakDir, `keycloak-${version}`);
const BUILD_OPTIONS = ['--db=dev-file', '--health-enabled=true'];

const run = (command: string, args: string[], env: Record<string, string> = {}) =>
  execFileSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } });

/**
 * Downloads (Maven), unpacks and builds (`kc.sh build`, the optimized start's prerequisite) the
 * distribution unless a finished install of this version and build options is already there.
 */
export function ensureKeycloak(version = KEYCLOAK_VERSION): string {
  const home = homeOf(version);
  const marker = join(home, '.bench-built');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === BUILD_OPTIONS.join(' ')) return home;
  mkdirSync(keycloakDir, { recursive: true });
  const archive = join(keycloakDir, `keycloak-quarkus-dist-${version}.tar.gz`);
  if (!existsSync(archive)) {
    console.log(`keycloak: fetching org.keycloak:keycloak-quarkus-dist:${version} (Maven)`);
    run('mvn', [
      '-q',
      'dependency:copy',
      `-Dartifact=org.keycloak:keycloak-quarkus-dist:${version}:tar.gz`,
      `-DoutputDirectory=${keycloakDir}`,
    ]);
  }
  rmSync(home, { recursive: true, force: true });
  run('tar', ['xzf', archive, '-C', keycloakDir]);
  console.log('keycloak: kc.sh build (about a minute)');
  run(join(home, 'bin', 'kc.sh'), ['build', ...BUILD_OPTIONS]);
  writeFileSync(marker, BUILD_OPTIONS.join(' '));
  return home;
}

export interface KeycloakServer {
  url: string;
  realmUrl: string;
  tokenUrl: string;
  clientSecret: string;
  /** The JVM's pid (kc.sh runs it as its child): the process whose CPU is Keycloak's. */
  pid: number;
  stop: () => Promise<void>;
}

function childPid(pid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

async function adminToken(url: string, password: string): Promise<string> {
  const res = await fetch(`${url}/realms/master/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: 'bench-admin', password }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`keycloak admin token: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** Starts Keycloak on free loopback ports with a fresh database and the bench realm. */
export async function startKeycloak(options: { users: number; redirectUri: string }): Promise<KeycloakServer> {
  const home = ensureKeycloak();
  rmSync(join(home, 'data'), { recursive: true, force: true });
  const [port, managementPort] = [await findFreePort(), await findFreePort()];
  const url = `http://127.0.0.1:${port}`;
  const adminPassword = randomBytes(12).toString('hex');
  const logDir = join(projectRoot, '.local', 'bench-logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `keycloak-${process.pid}-${Date.now()}.log`);
  const fd = openSync(logFile, 'w');
  const args = [
    'start',
    '--optimized',
    '--http-enabled=true',
    '--http-host=127.0.0.1',
    `--http-port=${port}`,
    `--http-management-port=${managementPort}`,
    '--hostname-strict=false',
  ];
  const script = spawn(join(home, 'bin', 'kc.sh'), args, {
    cwd: home,
    env: { ...process.env, KC_BOOTSTRAP_ADMIN_USERNAME: 'bench-admin', KC_BOOTSTRAP_ADMIN_PASSWORD: adminPassword },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const stop = () =>
    new Promise<void>((done) => {
      if (script.exitCode !== null || script.signalCode !== null) return done();
      const jvm = script.pid ? childPid(script.pid) : undefined;
      const timer = setTimeout(() => {
        if (jvm) process.kill(jvm, 'SIGKILL');
        script.kill('SIGKILL');
      }, 20000);
      script.once('exit', () => {
        clearTimeout(timer);
        done();
      });
      script.kill('SIGTERM'); // kc.sh forwards it to the JVM and waits for it
    });
  const deadline = Date.now() + 240000;
  for (;;) {
    if (script.exitCode !== null)
      throw new Error(`keycloak exited with ${script.exitCode}:\n${readFileSync(logFile, 'utf8').slice(-4000)}`);
    const ready = await fetch(`${url}/realms/master`)
      .then(async (res) => (await res.arrayBuffer(), res.ok))
      .catch(() => false);
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`keycloak not ready in time:\n${readFileSync(logFile, 'utf8').slice(-4000)}`);
    }
    await sleep(500);
  }
  const pid = script.pid ? childPid(script.pid) : undefined;
  if (!pid) throw new Error('keycloak: no JVM process under kc.sh');

  const clientSecret = randomBytes(24).toString('base64url');
  const realm = {
    realm: KEYCLOAK_REALM,
    enabled: true,
    clients: [
      {
        clientId: KEYCLOAK_CLIENT_ID,
        enabled: true,
        publicClient: false,
        clientAuthenticatorType: 'client-secret',
        secret: clientSecret,
        serviceAccountsEnabled: true,
        standardFlowEnabled: true,
        directAccessGrantsEnabled: false,
        redirectUris: [options.redirectUri],
        attributes: { 'pkce.code.challenge.method': 'S256' },
      },
    ],
    users: Array.from({ length: options.users }, (_v, i) => ({
      username: keycloakUser(i).username,
      enabled: true,
      email: `bench-user-${i}@example.test`,
      emailVerified: true,
      firstName: 'Bench',
      lastName: 'User',
      credentials: [{ type: 'password', value: keycloakUser(i).password, temporary: false }],
    })),
  };
  const res = await fetch(`${url}/admin/realms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await adminToken(url, adminPassword)}`, 'content-type': 'application/json' },
    body: JSON.stringify(realm),
  });
  if (res.status !== 201) throw new Error(`keycloak realm: ${res.status} ${await res.text()}`);
  const realmUrl = `${url}/realms/${KEYCLOAK_REALM}`;
  return { url, realmUrl, tokenUrl: `${realmUrl}/protocol/openid-connect/token`, clientSecret, pid, stop };
}
