export type TemplateChannel = 'SMS' | 'EMAIL';

/** What an admin or a seed file provides. */
export interface TemplateContent {
  name: string;
  channel: TemplateChannel;
  /** Plain text: the SMS body, or the text part of an e-mail. `__MACRO__`s only, no Handlebars. */
  text: string;
  /** E-mail subject. `__MACRO__`s only. */
  subject?: string;
  /** E-mail HTML: Handlebars (layouts and partials from templates/) plus `__MACRO__`s. */
  html?: string;
  /**
   * The enterprise whose requests alone may use it; absent, every enterprise's may (the seeded
   * defaults). Set when the template is created and never changed.
   */
  enterpriseId?: string;
}

/** A stored template. `version` grows by one on each admin edit. */
export interface MessageTemplate extends TemplateContent {
  version: number;
  /** `seed` until an admin edits it; seeding never overwrites an existing template. */
  source: 'seed' | 'admin';
  updatedAt: Date;
}

/** A stored template as the admin list shows it: everything but the HTML. */
export type TemplateSummary = Omit<MessageTemplate, 'html'>;

export interface RenderedMessage {
  subject?: string;
  text: string;
  html?: string;
}
