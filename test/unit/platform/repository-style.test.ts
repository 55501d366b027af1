import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../core/platform/project-root.js';

// One repository style: each core/**/<name>.repository.ts exports create<Name>Repository(connection)
// returning its methods (and the type of what it returns), so a composition root builds it once
// and hands it down; no repository exports functions that take the connection on every call.
const REPOSITORIES = readdirSync(join(projectRoot, 'core'), { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.repository.ts'))
  .map((path) => join('core', path));

describe('repository style', () => {
  test.each(REPOSITORIES)('%s is a repository factory', (path) => {
    const text = readFileSync(join(projectRoot, path), 'utf8');
    expect(text).toMatch(/^export function create\w+Repository\(connection: Connection[,)]/m);
    expect(text).toMatch(/^export type \w+Repository = ReturnType<typeof create\w+Repository>;/m);
    // Besides the factory, only a model accessor (for migrations) may take the connection.
    const others = /^export (async )?function (?!create\w+Repository\b|\w+Model\b)\w+(<[^>]*>)?\(\s*connection: Connection/m;
    expect(text).not.toMatch(others);
  });
});

// One place builds them: a repository is built once by its process's composition root and handed
// down, never per request or per call. These are the roots, and the other modules that build one
// once per process: the start-up seeding (default templates, the demo client) and the server
// secrets loaded on first use (signing, cookie and VAPID keys).
const ROOTS = [
  /^api\/composition-root\.ts$/, // the API's composeApi
  /^workers\/[^/]+\/[^/]+-worker\.ts$/, // each worker's start<Name>Worker
  /^scripts\/admin-cli\/cli-root\.ts$/, // the admin CLI's composeCli
  // No other script needs one, so none is a root: `migrate` and `start-local` change the store
  // through core/migrations (registered models, not repositories), and `start-local` starts the API
  // and the workers through their own roots; admin-cli.ts only opens the connection the CLI root
  // uses; scripts/support and the rest touch no store.
];
const START_UP_BOOTSTRAPS = ['api/service-context.factory.ts', 'core/auth/signing-key.service.ts', 'core/push/vapid-keys.ts'];
const BUILDS_A_REPOSITORY = /\bcreate[A-Z]\w*Repository\(/;
const DEFINES_A_REPOSITORY = /^export function create\w+Repository\(/;

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(projectRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))
    .map((path) => join(folder, path).split('\\').join('/'));
}

/** Lines of files that are neither roots nor `allowed` which call `builds` (its definition and comments aside). */
function callsOutsideRoots(builds: RegExp, defines: RegExp, allowed: readonly string[] = []): string[] {
  return ['api', 'core', 'workers', 'scripts']
    .flatMap(sourcesUnder)
    .filter((path) => !ROOTS.some((root) => root.test(path)) && !allowed.includes(path))
    .flatMap((path) =>
      readFileSync(join(projectRoot, path), 'utf8')
        .split('\n')
        .map((line, index) => ({ path, line: index + 1, text: line.trim() }))
        .filter(({ text }) => builds.test(text) && !defines.test(text) && !/^(\/\/|\*|\/\*)/.test(text)),
    )
    .map(({ path, line, text }) => `${path}:${line}: ${text} (take it from the composition root instead)`);
}

describe('repositories are built at composition roots only', () => {
  test('no file outside the roots and start-up bootstraps calls create<Name>Repository(', () => {
    expect(callsOutsideRoots(BUILDS_A_REPOSITORY, DEFINES_A_REPOSITORY, START_UP_BOOTSTRAPS)).toEqual([]);
  });

  // An admin change forgets what the process's one client lookup and one template cache hold; a
  // second one built elsewhere would keep serving the old client or template until its TTL. A
  // second set of revocation checks would not see a revocation made through this process (the
  // authorization server marks it in the set the bearer checks read), and second signing or VAPID
  // key caches would load the keys again; second session checks would read each session again:
  // each is built once, by the root, and passed down.
  const PER_PROCESS = '(ClientLookup|TemplateCache|RevocationChecks|TokenSessionChecks|SigningKeysCache|VapidKeysCache)';
  test('no file outside the roots builds a client lookup, a template cache, revocation or session checks or a signing or VAPID key cache', () => {
    expect(callsOutsideRoots(new RegExp(`\\bcreate${PER_PROCESS}\\(`), new RegExp(`^export function create${PER_PROCESS}\\(`))).toEqual([]);
  });

  test('no file but the roots and its own module constructs revocation checks', () => {
    expect(callsOutsideRoots(/\bnew RevocationChecks\(/, /^$/, ['core/auth/revocation-checks.ts'])).toEqual([]);
  });

  test('no file but the roots and its own module constructs session checks', () => {
    expect(callsOutsideRoots(/\bnew TokenSessionChecks\(/, /^$/, ['core/auth/token-session-checks.ts'])).toEqual([]);
  });

  test.each(START_UP_BOOTSTRAPS)('the listed bootstrap %s still builds one (else drop it from the list)', (path) => {
    expect(readFileSync(join(projectRoot, path), 'utf8')).toMatch(BUILDS_A_REPOSITORY);
  });
});
