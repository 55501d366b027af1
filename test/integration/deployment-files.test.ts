import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { buildApp } from '../../api/app.js';
import { configProblems } from '../support/config-problems.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { readProcfile } from '../../scripts/procfile.js';
import { listAppRoutes } from '../support/list-app-routes.js';
import { startTestService, type TestService } from '../support/test-service.js';

/** A parsed YAML object: its shape is what the assertions check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Parsed = any;

// No container engine runs here: these tests read the deployment files as the engines would
// and check them against the code they deploy (Procfile, configuration, routes).

const procfile = readProcfile();
const commandOf = (type: string) => {
  const line = procfile.find((l) => l.type === type);
  if (!line) throw new Error(`no Procfile type ${type}`);
  return [line.program, ...line.flags, line.entry];
};

/** Values of the right shape for the secrets an operator must provide. */
const operatorSecrets: Record<string, string> = {
  ADMIN_TOKEN: randomBytes(24).toString('base64url'),
  OTP_HMAC_KEY: randomBytes(32).toString('base64url'),
  OTP_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  MONGODB_URI: 'mongodb://user:password@mongo-0,mongo-1,mongo-2/svc-identity?replicaSet=rs0&w=majority&retryWrites=true',
  REDIS_URL: 'redis://:password@redis:6379',
};

/** Highest resident memory per role over the soak runs in docs/reliability.md (3, 15 and 30 minutes), in MiB. */
const measuredPeakMiB: Record<string, number> = { web: 180, dispatch: 134, enrollment: 122, notifications: 127 };

function mebibytes(quantity: string): number {
  const match = /^([0-9]+)(Mi|Gi|M|G)$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  const value = Number(match[1]);
  return { Mi: value, Gi: value * 1024, M: (value * 1e6) / 2 ** 20, G: (value * 1e9) / 2 ** 20 }[match[2] as 'Mi' | 'Gi' | 'M' | 'G'];
}

interface Instruction {
  keyword: string;
  args: string;
  stage: number;
}

/** Dockerfile instructions (continuation lines joined, comments dropped), with the stage each belongs to. */
function readDockerfile(): Instruction[] {
  const text = readFileSync(join(projectRoot, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  let stage = -1;
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      if (keyword.toUpperCase() === 'FROM') stage += 1;
      return { keyword: keyword.toUpperCase(), args: rest.join(' '), stage };
    });
}

describe('Deployment files', () => {
  let service: TestService;
  let routes: { method: string; path: string }[];

  beforeAll(async () => {
    service = await startTestService('deployfiles');
    routes = listAppRoutes(buildApp(service.ctx));
  });
  afterAll(async () => {
    await service.close();
  });

  /** A probe path must be a GET route of the app and answer 200 on a healthy service. */
  async function expectServedProbe(path: string): Promise<void> {
    expect(routes).toContainEqual({ method: 'get', path });
    expect((await fetch(`${service.url}${path}`)).status).toBe(200);
  }

  describe('Dockerfile', () => {
    const instructions = readDockerfile();
    const last = Math.max(...instructions.map((i) => i.stage));
    /** Each stage that runs `npm ci`, with the build-context sources it copies before that. */
    const copiedBeforeInstall = () =>
      [...new Set(instructions.map((i) => i.stage))].flatMap((stage) => {
        const own = instructions.filter((i) => i.stage === stage);
        const install = own.findIndex((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args));
        if (install < 0) return [];
        const copied = own
          .slice(0, install)
          .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
          .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
        return [{ stage, copied }];
      });

    const final = instructions.filter((i) => i.stage === last);

    test('when read, then it builds in one stage and runs on Node 24 slim in another, installs production dependencies only with npm ci, as a non-root user', () => {
      const froms = instructions.filter((i) => i.keyword === 'FROM');
      expect(froms.length).toBeGreaterThanOrEqual(2);
      for (const from of froms) expect(from.args).toMatch(/^node:24-slim\b/);
      expect(instructions.some((i) => i.stage < last && i.keyword === 'RUN' && i.args.includes('tsc -p tsconfig.build.json'))).toBe(true);
      expect(final.filter((i) => i.keyword === 'RUN').map((i) => i.args)).toContainEqual(expect.stringMatching(/^npm ci --omit=dev\b/));
      const user = final.filter((i) => i.keyword === 'USER').pop();
      expect(user?.args).toBeDefined();
      expect(['root', '0']).not.toContain(user?.args.split(':')[0]);
      // The user is set before the command runs, and nothing after it switches back.
      expect(final.findIndex((i) => i.keyword === 'USER')).toBeLessThan(final.findIndex((i) => i.keyword === 'CMD'));
    });

    test('when read, then its default command is the Procfile web command and its HEALTHCHECK asks a path the app serves', async () => {
      const cmd = final.find((i) => i.keyword === 'CMD');
      expect(JSON.parse(cmd?.args ?? 'null')).toEqual(commandOf('web'));
      const healthcheck = final.find((i) => i.keyword === 'HEALTHCHECK');
      const path = /127\.0\.0\.1:' \+ \(process\.env\.PORT \|\| 8080\) \+ '(\/[a-z]+)'/.exec(healthcheck?.args ?? '')?.[1];
      expect(path).toBe('/healthz');
      await expectServedProbe(path as string);
    });

    test('when read, then every file copied from the build context exists and is not excluded by .dockerignore, and the files read at run time are in the final stage', () => {
      const ignored = readFileSync(join(projectRoot, '.dockerignore'), 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'));
      const copies = instructions.filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'));
      for (const copy of copies) {
        const sources = copy.args.split(/\s+/).slice(0, -1);
        for (const source of sources) {
          expect(existsSync(join(projectRoot, source))).toBe(true);
          expect(ignored.filter((pattern) => source === pattern || source.startsWith(`${pattern}/`))).toEqual([]);
        }
      }
      // Local secrets (.env, .local/secrets.json) and the repository never reach an image.
      for (const secretPlace of ['.env', '.local', '.git']) expect(ignored).toContain(secretPlace);
      const finalSources = final.filter((i) => i.keyword === 'COPY').map((i) => i.args.split(/\s+/).slice(-2)[0]);
      for (const runtimeDir of ['schemas', 'templates', '/app/dist']) expect(finalSources).toContain(runtimeDir);
    });

    test("when a stage installs its packages, then every script npm runs there (the root's and the workspaces' install scripts and prepare) finds its file, copied before", () => {
      const root = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { workspaces?: string[] };
      // A missing file fails `npm ci`, and with it the image (sdk/scripts/prepare.mjs did).
      const needed = ['.', ...(root.workspaces ?? [])].flatMap((dir) => {
        const manifest = JSON.parse(readFileSync(join(projectRoot, dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
        return ['preinstall', 'install', 'postinstall', 'prepare'].flatMap((name) =>
          [...(manifest.scripts?.[name] ?? '').matchAll(/\b(?:node|bash)\s+([\w./-]+\.(?:m?js|cjs|sh))\b/g)].map((m) =>
            join(dir, m[1] as string),
          ),
        );
      });
      const checked = copiedBeforeInstall().flatMap(({ stage, copied }) => {
        return needed.map((file) => ({ stage, file, copied: copied.some((source) => file === source || file.startsWith(`${source}/`)) }));
      });
      expect(checked.length).toBeGreaterThan(0);
      expect(checked.filter((c) => !c.copied)).toEqual([]);
    });

    // The root's postinstall applies patches/ with patch-package: a stage that installs without
    // them (or, for production, without patch-package) fails its npm ci, or would ship the
    // dependency unpatched.
    test('when a stage installs its packages, then the patches the install applies are copied before, and what applies them is a production dependency', () => {
      const root = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
        scripts?: Record<string, string>;
        dependencies?: Record<string, string>;
      };
      expect(root.scripts?.postinstall).toMatch(/^patch-package\b/);
      expect(Object.keys(root.dependencies ?? {})).toContain('patch-package');
      expect(readdirSync(join(projectRoot, 'patches')).length).toBeGreaterThan(0);
      const installing = copiedBeforeInstall().map(({ stage, copied }) => ({ stage, patchesCopied: copied.includes('patches') }));
      expect(installing.length).toBeGreaterThanOrEqual(2);
      expect(installing.filter((s) => !s.patchesCopied)).toEqual([]);
    });
  });

  describe('deploy/compose.yml', () => {
    const compose = parse(readFileSync(join(projectRoot, 'deploy', 'compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, Record<string, unknown>>;
    };
    const service = (name: string) => compose.services[name] as Parsed;

    test('when read, then every Procfile role is a service running the Procfile command, with replicas and a memory limit above its measured peak', () => {
      for (const { type } of procfile) {
        expect(service(type).command).toEqual(commandOf(type));
        expect(service(type).deploy.replicas).toBeGreaterThanOrEqual(1);
        expect(mebibytes(service(type).deploy.resources.limits.memory)).toBeGreaterThan(measuredPeakMiB[type] as number);
        expect(Number.parseInt(service(type).stop_grace_period, 10)).toBeGreaterThan(30);
      }
      expect(service('web').deploy.replicas).toBeGreaterThanOrEqual(2);
    });

    test('when read, then MongoDB 8 runs as a one-node replica set on a volume with an init, and Redis keeps an AOF fsynced every second and never evicts', () => {
      expect(service('mongo').image).toMatch(/^mongo:8\b/);
      expect(service('mongo').command).toEqual(expect.arrayContaining(['--replSet', 'rs0']));
      expect(service('mongo').volumes).toContainEqual(expect.stringMatching(/:\/data\/db$/));
      expect(service('mongo-init').command.join(' ')).toContain('rs.initiate(');
      const redisArgs = (service('redis').command as string[]).join(' ');
      expect(redisArgs).toContain('--appendonly yes');
      expect(redisArgs).toContain('--appendfsync everysec');
      expect(redisArgs).toContain('--maxmemory-policy noeviction');
      expect(service('redis').volumes).toContainEqual(expect.stringMatching(/:\/data$/));
      for (const { type } of procfile) {
        expect(service(type).depends_on['mongo-init'].condition).toBe('service_completed_successfully');
        expect(service(type).environment.MONGODB_URI).toContain('replicaSet=rs0');
      }
    });

    test('when the operator gives the three secrets, then every role starts in production; the three are required (${NAME:?}), so compose refuses to start without them', () => {
      for (const { type } of procfile) {
        const required: string[] = [];
        const env: Record<string, string> = {};
        for (const [key, value] of Object.entries(service(type).environment as Record<string, string>)) {
          // Compose interpolation: ${NAME:?message} must be given, ${NAME:-default} falls back.
          env[key] = String(value).replace(/\$\{([A-Z_]+)(?::([?-])([^}]*))?\}/g, (_m, name: string, kind?: string, rest?: string) => {
            if (kind === '?') {
              required.push(name);
              return operatorSecrets[name] ?? '';
            }
            return rest ?? '';
          });
        }
        expect(required.sort()).toEqual(['ADMIN_TOKEN', 'OTP_ENCRYPTION_KEY', 'OTP_HMAC_KEY']);
        expect(env.NODE_ENV).toBe('production');
        expect(configProblems(env)).toEqual([]);
      }
      expect(service('web').healthcheck).toBeUndefined();
      for (const worker of ['dispatch', 'enrollment', 'notifications']) expect(service(worker).healthcheck).toEqual({ disable: true });
    });
  });

  describe('deploy/kubernetes', () => {
    const dir = join(projectRoot, 'deploy', 'kubernetes');
    const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    const objects = kustomization.resources.flatMap((file) =>
      parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => d.toJS() as Parsed),
    );
    const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
    const deployment = (type: string) => find('Deployment', `svc-identity-${type}`);
    const configMap = find('ConfigMap', 'svc-identity-config');
    const secret = find('Secret', 'svc-identity-secrets');

    /** A container's environment as Kubernetes assembles it (envFrom first, then env). */
    function containerEnv(type: string, secretValues: Record<string, string>): Record<string, string> {
      const container = deployment(type).spec.template.spec.containers[0];
      const env: Record<string, string> = {};
      for (const from of container.envFrom ?? []) {
        if (from.configMapRef) Object.assign(env, find('ConfigMap', from.configMapRef.name).data);
        if (from.secretRef) Object.assign(env, find('Secret', from.secretRef.name).stringData, secretValues);
      }
      for (const { name, value } of container.env ?? []) env[name] = value;
      return env;
    }

    test('when listed, then the kustomization names every manifest in the folder', () => {
      const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
      expect([...kustomization.resources].sort()).toEqual(files.sort());
    });

    test('when read, then every Procfile role is a Deployment running the Procfile command, with memory requests at or above its measured peak and limits above them', () => {
      for (const { type } of procfile) {
        const spec = deployment(type).spec;
        expect(spec.replicas).toBeGreaterThanOrEqual(1);
        expect(spec.selector.matchLabels).toEqual(spec.template.metadata.labels);
        const container = spec.template.spec.containers[0];
        expect(container.command).toEqual(commandOf(type));
        expect(mebibytes(container.resources.requests.memory)).toBeGreaterThanOrEqual(measuredPeakMiB[type] as number);
        expect(mebibytes(container.resources.limits.memory)).toBeGreaterThan(mebibytes(container.resources.requests.memory));
        expect(spec.template.spec.securityContext.runAsNonRoot).toBe(true);
        expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
        // The process always finishes its shutdown before Kubernetes sends SIGKILL.
        const env = containerEnv(type, operatorSecrets);
        const shutdownMs = Number(env.SHUTDOWN_DEADLINE_MS ?? 25000) + (type === 'web' ? Number(env.SHUTDOWN_DRAIN_WINDOW_MS ?? 5000) : 0);
        expect(spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(shutdownMs);
      }
    });

    test('when the Secret is filled in, then every role starts in production; left as shipped, every role refuses to start, naming each missing secret', () => {
      expect(configMap.data.NODE_ENV).toBe('production');
      for (const { type } of procfile) {
        expect(configProblems(containerEnv(type, operatorSecrets))).toEqual([]);
        const refusals = configProblems(containerEnv(type, {}));
        for (const key of Object.keys(secret.stringData).filter((k) => k in operatorSecrets)) {
          expect(refusals).toContainEqual(expect.stringMatching(new RegExp(`^${key}: `)));
        }
      }
    });

    test('when read, then each worker Deployment serves its metrics on METRICS_PORT and probes liveness on the same port at /healthz, with the scrape annotations', () => {
      for (const type of ['dispatch', 'enrollment', 'notifications']) {
        const template = deployment(type).spec.template;
        const container = template.spec.containers[0];
        const metricsPort = (container.env as { name: string; value: string }[]).find((e) => e.name === 'METRICS_PORT')?.value;
        expect([type, metricsPort]).toEqual([type, '9464']);
        const port = (container.ports as { name: string; containerPort: number }[]).find(
          (p) => p.name === container.livenessProbe.httpGet.port,
        );
        expect([type, container.livenessProbe.httpGet.path, port?.containerPort]).toEqual([type, '/healthz', 9464]);
        expect(template.metadata.annotations).toEqual({
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': '9464',
          'prometheus.io/path': '/metrics',
        });
      }
    });

    test('when read, then the web Deployment probes readiness and liveness on paths the app serves, on its named port', async () => {
      const container = deployment('web').spec.template.spec.containers[0];
      const portNames = (container.ports as { name: string }[]).map((p) => p.name);
      expect(container.readinessProbe.httpGet.path).toBe('/readyz');
      expect(container.livenessProbe.httpGet.path).toBe('/healthz');
      for (const probe of [container.readinessProbe, container.livenessProbe]) {
        expect(portNames).toContain(probe.httpGet.port);
        await expectServedProbe(probe.httpGet.path);
      }
      // The drain window outlasts the probes that take a draining pod out of rotation.
      const env = containerEnv('web', operatorSecrets);
      const probe = container.readinessProbe;
      expect(Number(env.SHUTDOWN_DRAIN_WINDOW_MS)).toBeGreaterThan(probe.periodSeconds * probe.failureThreshold * 1000);
    });

    test('when read, then a Service selects the web pods on their named port and a PodDisruptionBudget keeps all but one web pod up', () => {
      const web = deployment('web').spec;
      const svc = find('Service', 'svc-identity-web');
      expect(svc.spec.selector).toEqual(web.template.metadata.labels);
      expect(web.template.spec.containers[0].ports.map((p: { name: string }) => p.name)).toContain(svc.spec.ports[0].targetPort);
      const pdb = find('PodDisruptionBudget', 'svc-identity-web');
      expect(pdb.spec.selector.matchLabels).toEqual(web.template.metadata.labels);
      expect(pdb.spec.maxUnavailable).toBe(1);
      expect(web.replicas).toBeGreaterThanOrEqual(2);
    });
  });
});
