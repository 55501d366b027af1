// The repository's `prepare` (root package.json), run by every `npm ci` or `npm install` at the
// root: in a checkout it builds the client library (so the workspace, its type checks and the
// approver app use fresh code), but it also runs where it cannot build, such as the Docker stages
// that install dependencies before copying the sources, or production installs without
// TypeScript. There it says why it skips instead of failing the install. It is not the package's
// own script: a `prepare` in sdk/package.json would ship in the tarball, where npm warns of it as
// an install script and this file is not shipped; `prepack` builds what the tarball ships.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const here = new URL('..', import.meta.url);
const missing = ['tsconfig.json', 'src/index.ts'].filter((file) => !existsSync(new URL(file, here)));
try {
  createRequire(new URL('package.json', here)).resolve('typescript/bin/tsc');
} catch {
  missing.push('typescript (a dev dependency)');
}
if (missing.length > 0) {
  console.log(`@svc-identity/client: not built here (missing ${missing.join(', ')}); npm pack builds it`);
} else {
  execFileSync('npm', ['run', 'build'], { cwd: here, stdio: 'inherit' });
}
