import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './project-root.js';

/**
 * The service's name and release, read once from package.json. `GET /` names them, and the OpenAPI
 * document's `info.version` is the release: the document is generated from the routes of the code
 * that serves it, so it changes with each release and has no version of its own to keep apart.
 */
export const serviceRelease: { readonly name: string; readonly version: string } = (() => {
  const { name, version } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { name: string; version: string };
  return { name, version };
})();
