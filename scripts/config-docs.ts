// `npm run config:docs`: writes `.env.example` and the settings tables of docs/configuration.md
// from core/platform/config/settings.ts. The prose around the tables is left as it is.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../core/platform/project-root.js';
import { renderConfigurationDoc, renderEnvExample } from './config-docs/render.js';

const doc = join(projectRoot, 'docs', 'configuration.md');
writeFileSync(join(projectRoot, '.env.example'), renderEnvExample());
writeFileSync(doc, renderConfigurationDoc(readFileSync(doc, 'utf8')));
process.stdout.write('wrote .env.example and docs/configuration.md\n');
