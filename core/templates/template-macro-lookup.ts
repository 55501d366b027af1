import type { TemplateCache } from './template-cache.js';
import { findTemplateMacros } from './template-renderer.js';
import type { MessageTemplate } from './template.types.js';

/**
 * A template's channel and the macros its message will hold (found in the expanded HTML too, by
 * the renderer's own reading), for the OTP request's check: what the check asks values for is
 * exactly what the dispatch worker will fill. Found once per template read: the cache hands out
 * the same object until it reads the template again.
 */
export function createTemplateMacroLookup(cache: Pick<TemplateCache, 'find'>) {
  const macrosOf = new WeakMap<MessageTemplate, readonly string[]>();
  return {
    async findTemplate(
      name: string,
      enterpriseId: string,
    ): Promise<{ channel: MessageTemplate['channel']; macros: readonly string[] } | undefined> {
      const template = await cache.find(name, enterpriseId);
      if (!template) return undefined;
      let macros = macrosOf.get(template);
      if (!macros) {
        macros = findTemplateMacros(template);
        macrosOf.set(template, macros);
      }
      return { channel: template.channel, macros };
    },
  };
}
