import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DECLARED_MODELS } from '../../../core/migrations/declared-models.js';
import { projectRoot } from '../../../core/platform/project-root.js';

function repositoryFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? repositoryFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

// The start-up check and the migration command know only the models listed: a model a
// repository registers but the list forgets would never have its index changes migrated.
describe('declared models', () => {
  test('when a repository registers a model, then the migration catalog lists it under the same name', () => {
    const registered = repositoryFiles(join(projectRoot, 'core'))
      .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/modelFor\(\s*connection,\s*'([A-Za-z]+)'/g)].map((m) => m[1]))
      .sort();
    expect(registered.length).toBeGreaterThan(10);
    expect(DECLARED_MODELS.map((m) => m.name).sort()).toEqual([...new Set(registered)].sort());
  });
});
