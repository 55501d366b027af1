import type { Logger } from '../platform/logger/logger.js';
import { loadTemplateFiles } from './template-files.loader.js';
import { validateTemplateSyntax } from './template-renderer.js';
import type { TemplatesRepository } from './templates.repository.js';
import type { TemplateContent } from './template.types.js';

export interface SeedResult {
  inserted: string[];
  kept: string[];
}

/**
 * Inserts each default template that does not exist yet. An existing one (perhaps edited by an
 * admin) is kept as it is, so restarts and concurrent starts are harmless.
 */
export async function seedTemplates(
  templates: Pick<TemplatesRepository, 'insertTemplate'>,
  logger: Logger,
  defaults: TemplateContent[] = loadTemplateFiles(),
): Promise<SeedResult> {
  const result: SeedResult = { inserted: [], kept: [] };
  for (const template of defaults) {
    // A broken default file should stop the boot, not the first OTP.
    validateTemplateSyntax(template);
    const created = await templates.insertTemplate(template, 'seed');
    (created ? result.inserted : result.kept).push(template.name);
  }
  if (result.inserted.length > 0) logger.info({ inserted: result.inserted }, 'default templates seeded');
  return result;
}
