import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../core/platform/project-root.js';
import { SETTINGS } from '../../../core/platform/config/settings.js';
import { settingsSchema } from '../../../core/platform/config/settings-reader.js';
import {
  documentedSections,
  REGENERATE,
  renderConfigurationDoc,
  renderEnvExample,
  SETTING_SECTIONS,
} from '../../../scripts/config-docs/render.js';

const read = (path: string) => readFileSync(join(projectRoot, path), 'utf8');

/** Fails with the command that brings the file back in line with the settings table. */
function expectGenerated(path: string, actual: string, expected: string): void {
  if (actual !== expected) throw new Error(`${path} differs from core/platform/config/settings.ts; run \`${REGENERATE}\``);
}

describe('settings declared once', () => {
  test('when .env.example is compared with the settings table, then it is what the table gives', () => {
    expectGenerated('.env.example', read('.env.example'), renderEnvExample());
  });

  test('when docs/configuration.md is compared with the settings table, then every table is what it gives', () => {
    const doc = read('docs/configuration.md');
    expectGenerated('docs/configuration.md', doc, renderConfigurationDoc(doc));
  });

  test('when the docs are read, then every section of the table has its table there', () => {
    expect(
      documentedSections(read('docs/configuration.md'))
        .filter((s) => s !== 'tools')
        .sort(),
    ).toEqual([...SETTING_SECTIONS].sort());
  });

  test('when the schema is generated, then it checks every declared setting and requires the required ones', () => {
    const schema = settingsSchema();
    expect(Object.keys(schema.properties)).toEqual(Object.keys(SETTINGS));
    expect(schema.required).toEqual(['PUBLIC_URL', 'MONGODB_URI']);
  });
});
