import { Schema, type Connection } from 'mongoose';
import { isDuplicateKeyError as isDuplicateKey } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import type { MessageTemplate, TemplateContent, TemplateSummary } from './template.types.js';

export const templateSchema = new Schema<MessageTemplate>(
  {
    name: { type: String, required: true },
    channel: { type: String, enum: ['SMS', 'EMAIL'], required: true },
    text: { type: String, required: true },
    subject: { type: String },
    html: { type: String },
    version: { type: Number, required: true },
    source: { type: String, enum: ['seed', 'admin'], required: true },
    updatedAt: { type: Date, required: true },
  },
  { collection: 'templates', versionKey: false },
);
templateSchema.index({ name: 1 }, { unique: true });

const readyModel = (connection: Connection) => modelFor(connection, 'MessageTemplate', templateSchema);

function toTemplate(doc: MessageTemplate & { _id?: unknown }): MessageTemplate {
  const { _id, ...rest } = doc;
  return rest;
}

export function createTemplatesRepository(connection: Connection) {
  return {
    async findTemplate(name: string): Promise<MessageTemplate | undefined> {
      const doc = await (await readyModel(connection)).findOne({ name }).lean();
      return doc ? toTemplate(doc) : undefined;
    },

    async listTemplates(): Promise<MessageTemplate[]> {
      const docs = await (await readyModel(connection)).find({}).sort({ name: 1 }).lean();
      return docs.map(toTemplate);
    },

    /** Every template by name, without its HTML (up to 200 000 characters each): the admin list. */
    async listTemplatesWithoutHtml(): Promise<TemplateSummary[]> {
      const docs = await (await readyModel(connection)).find({}, { html: 0 }).sort({ name: 1 }).lean();
      return docs.map(toTemplate);
    },

    /** Removes the template; false when there was none. */
    async removeTemplate(name: string): Promise<boolean> {
      return (await (await readyModel(connection)).deleteOne({ name })).deletedCount === 1;
    },

    /** Inserts a new template; `undefined` when the name is taken (unique index, race-safe). */
    async insertTemplate(content: TemplateContent, source: MessageTemplate['source']): Promise<MessageTemplate | undefined> {
      const model = await readyModel(connection);
      try {
        const created = await model.create({ ...content, version: 1, source, updatedAt: new Date() });
        return toTemplate(created.toObject());
      } catch (err) {
        if (isDuplicateKey(err)) return undefined;
        throw err;
      }
    },

    /** Replaces the content of an existing template and bumps its version; `undefined` when absent. */
    async replaceTemplateContent(name: string, content: Omit<TemplateContent, 'name'>): Promise<MessageTemplate | undefined> {
      const model = await readyModel(connection);
      const unset: Record<string, 1> = {};
      if (content.subject === undefined) unset.subject = 1;
      if (content.html === undefined) unset.html = 1;
      const doc = await model
        .findOneAndUpdate(
          { name },
          {
            $set: {
              channel: content.channel,
              text: content.text,
              source: 'admin',
              updatedAt: new Date(),
              ...(content.subject !== undefined ? { subject: content.subject } : {}),
              ...(content.html !== undefined ? { html: content.html } : {}),
            },
            $inc: { version: 1 },
            ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}),
          },
          { new: true },
        )
        .lean();
      return doc ? toTemplate(doc) : undefined;
    },
  };
}

export type TemplatesRepository = ReturnType<typeof createTemplatesRepository>;
