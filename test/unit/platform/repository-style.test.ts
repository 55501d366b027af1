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
