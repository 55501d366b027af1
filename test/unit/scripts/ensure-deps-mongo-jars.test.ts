import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../../core/platform/project-root.js';

// scripts/ensure-deps.sh fetches the local MongoDB-wire server's jars again whenever pom.xml
// changed. These run the real script in a copy of the project's layout, with a `mvn` on PATH that
// stands for Maven offline or working, so nothing is fetched and the project's own tree is not
// touched. The copy's npm stamp matches its lock file and REDIS_URL is set: only the jars' part runs.
const trees = mkdtempSync(join(tmpdir(), 'ensure-deps-'));
afterAll(() => rmSync(trees, { recursive: true, force: true }));

const OFFLINE_MVN = `#!/bin/sh
echo "[ERROR] Failed to execute goal on project local-mongo-server: Could not transfer artifact org.slf4j:slf4j-simple:jar:2.0.17: repo.maven.apache.org: Temporary failure in name resolution"
exit 1
`;
// Copies the project's jars into the folder it is asked for, as dependency:copy-dependencies does.
const projectJars = join(projectRoot, 'scripts', 'mongo-server', 'lib');
const WORKING_MVN = `#!/bin/sh
for arg in "$@"; do case "$arg" in -DoutputDirectory=*) out="\${arg#-DoutputDirectory=}";; esac; done
mkdir -p "$out" && cp "${projectJars}"/*.jar "$out/"
`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A project tree whose jars were fetched for another pom.xml (or never, without `jars`). */
function tree(
  name: string,
  mvn: string,
  jars?: string[],
  withSources = false,
): { root: string; lib: string; run: () => SpawnSyncReturns<string> } {
  const root = join(trees, name);
  const mdir = join(root, 'scripts', 'mongo-server');
  mkdirSync(mdir, { recursive: true });
  cpSync(join(projectRoot, 'scripts', 'ensure-deps.sh'), join(root, 'scripts', 'ensure-deps.sh'));
  cpSync(join(projectRoot, 'scripts', 'mongo-server', 'pom.xml'), join(mdir, 'pom.xml'));
  writeFileSync(join(root, 'package-lock.json'), '{}\n');
  mkdirSync(join(root, 'node_modules'));
  writeFileSync(join(root, 'node_modules', '.svc-lock-stamp'), `${sha256('{}\n')}\n`);
  if (withSources)
    for (const file of readdirSync(join(projectRoot, 'scripts', 'mongo-server')))
      if (file.endsWith('.java')) cpSync(join(projectRoot, 'scripts', 'mongo-server', file), join(mdir, file));
  const lib = join(mdir, 'lib');
  if (jars) {
    mkdirSync(lib);
    for (const jar of jars) writeFileSync(join(lib, jar), 'jar');
    writeFileSync(join(lib, '.pom-stamp'), `${sha256('an older pom.xml')}\n`);
    // The launcher was built against them (no .java files here: nothing is compiled).
    mkdirSync(join(mdir, 'classes'));
    writeFileSync(join(mdir, 'classes', '.built'), '');
  }
  const bin = join(root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'mvn'), mvn);
  chmodSync(join(bin, 'mvn'), 0o755);
  // No LANG or LC_ALL: the C locale of a container, cron or CI.
  const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: root, REDIS_URL: 'redis://127.0.0.1:1' };
  return { root, lib, run: () => spawnSync('bash', [join(root, 'scripts', 'ensure-deps.sh')], { encoding: 'utf8', env }) };
}

describe('ensure-deps.sh: the local MongoDB-wire server jars', () => {
  test('when pom.xml changed and Maven cannot fetch (offline), then the previous jars stay, the start goes on, and what Maven said is shown', () => {
    const { lib, run } = tree('offline-with-jars', OFFLINE_MVN, ['mongo-java-server-1.47.0.jar', 'slf4j-nop-2.0.17.jar']);
    const stampBefore = readFileSync(join(lib, '.pom-stamp'), 'utf8');
    const result = run();
    expect(result.stderr).toContain('Temporary failure in name resolution');
    expect(result.stderr).toContain('the previous jars stay');
    expect(result.status).toBe(0);
    expect(readdirSync(lib).sort()).toEqual(['.pom-stamp', 'mongo-java-server-1.47.0.jar', 'slf4j-nop-2.0.17.jar']);
    // Not marked as fetched: the next start tries again.
    expect(readFileSync(join(lib, '.pom-stamp'), 'utf8')).toBe(stampBefore);
    expect(existsSync(`${lib}.next`)).toBe(false);
  });

  test('when there are no jars yet (a fresh clone) and Maven cannot fetch, then the script fails and shows what Maven said', () => {
    const { lib, run } = tree('offline-fresh', OFFLINE_MVN);
    const result = run();
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('Temporary failure in name resolution');
    expect(existsSync(lib)).toBe(false);
  });

  test('when a fetch was interrupted (lib.next left behind) and Maven works, then lib/ holds exactly the new jars and the stamp of this pom.xml, and the launcher is compiled against them whatever the locale', () => {
    const { root, lib, run } = tree('interrupted', WORKING_MVN, ['slf4j-nop-2.0.17.jar'], true);
    mkdirSync(`${lib}.next`);
    writeFileSync(join(`${lib}.next`, 'half-written.jar'), 'ja');
    const result = run();
    expect(result.stderr).not.toContain('error');
    expect(result.status).toBe(0);
    const fetched = readdirSync(projectJars).filter((file) => file.endsWith('.jar'));
    expect(readdirSync(lib).sort()).toEqual(['.pom-stamp', ...fetched].sort());
    // The launcher is compiled again, against the new jars.
    expect(existsSync(join(root, 'scripts', 'mongo-server', 'classes', 'LocalMongoServer.class'))).toBe(true);
    const pom = readFileSync(join(root, 'scripts', 'mongo-server', 'pom.xml'));
    expect(readFileSync(join(lib, '.pom-stamp'), 'utf8').trim()).toBe(createHash('sha256').update(pom).digest('hex'));
    expect(existsSync(`${lib}.next`)).toBe(false);
  });
});
