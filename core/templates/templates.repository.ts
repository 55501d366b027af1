import { Schema, type Connection } from 'mongoose';
import { createOwingCollection } from '../activity/owing-collection.js';
import {
  indexOwedEntries,
  notDeleted,
  owing,
  owingSchemaFields,
  withoutOwingFields,
  type OwedEntry,
  type OwingFields,
} from '../activity/owed-entries.js';
import { isDuplicateKeyError as isDuplicateKey } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import { ownerFields, ownerFilter, storedOwner, type TemplateOwner } from './template-owner.js';
import type { MessageTemplate, TemplateContent, TemplateSummary } from './template.types.js';

/**
 * `creationClaimId`: the Idempotency-Key claim of the request that created it, so a retry of that
 * request after its process died finds what it created (never shown).
 */
type TemplateDoc = MessageTemplate & OwingFields & { creationClaimId?: string };

export const templateSchema = new Schema<TemplateDoc>(
  {
    name: { type: String, required: true },
    channel: { type: String, enum: ['SMS', 'EMAIL'], required: true },
    text: { type: String, required: true },
    subject: { type: String },
    html: { type: String },
    enterpriseId: { type: String },
    version: { type: Number, required: true },
    source: { type: String, enum: ['seed', 'admin'], required: true },
    updatedAt: { type: Date, required: true },
    creationClaimId: { type: String },
    ...owingSchemaFields,
  },
  { collection: 'templates', versionKey: false },
);
// Names are unique per owner: the shared set (no enterpriseId, indexed as null) and each
// enterprise's own. A deleted template keeps its name until its entry is written; creating the
// name again takes that document over (insertTemplate), so the name is free at once.
templateSchema.index({ enterpriseId: 1, name: 1 }, { unique: true });
indexOwedEntries(templateSchema);

const readyModel = (connection: Connection) => modelFor(connection, 'MessageTemplate', templateSchema);

function toTemplate(doc: TemplateDoc & { _id?: unknown }): MessageTemplate {
  const { _id, creationClaimId: _claim, ...rest } = doc;
  return withoutOwingFields(rest);
}

/** A template as its owner names it: the key of what its changes owe the record. */
export interface OwnedName {
  name: string;
  owner: TemplateOwner;
}

/** The admin list: every owner's templates, or one enterprise's own. */
const listFilter = ownerFields;

/** How often an insert tries again when the deleted template holding its name is removed between the insert and the take-over. */
const TAKE_OVER_ATTEMPTS = 3;

export function createTemplatesRepository(connection: Connection) {
  return {
    /** One owner's template of this name if the Idempotency-Key claim `creationClaimId` created it. */
    async findTemplateCreatedBy(name: string, owner: TemplateOwner, creationClaimId: string): Promise<MessageTemplate | undefined> {
      const doc = await (await readyModel(connection)).findOne({ name, ...ownerFilter(owner), ...notDeleted, creationClaimId }).lean();
      return doc ? toTemplate(doc) : undefined;
    },

    /** One owner's template of this name (absent owner: the shared one). */
    async findTemplate(name: string, owner?: TemplateOwner): Promise<MessageTemplate | undefined> {
      const doc = await (await readyModel(connection)).findOne({ name, ...ownerFilter(owner), ...notDeleted }).lean();
      return doc ? toTemplate(doc) : undefined;
    },

    /** Every template of every owner by name, or one enterprise's own (`ownedBy`). */
    async listTemplates(ownedBy?: string): Promise<MessageTemplate[]> {
      const docs = await (
        await readyModel(connection)
      )
        .find({ ...listFilter(ownedBy), ...notDeleted })
        .sort({ name: 1, enterpriseId: 1 })
        .lean();
      return docs.map(toTemplate);
    },

    /** As listTemplates, without the HTML (up to 200 000 characters each): the admin list. */
    async listTemplatesWithoutHtml(ownedBy?: string): Promise<TemplateSummary[]> {
      const docs = await (
        await readyModel(connection)
      )
        .find({ ...listFilter(ownedBy), ...notDeleted }, { html: 0 })
        .sort({ name: 1, enterpriseId: 1 })
        .lean();
      return docs.map(toTemplate);
    },

    /**
     * Marks the template deleted, with the entry it owes, in one write: every read treats it as
     * gone at once, and it is removed once the entry is written. False when there was none.
     */
    async markTemplateDeleted(name: string, owner: TemplateOwner, owed: OwedEntry): Promise<boolean> {
      const model = await readyModel(connection);
      return (
        (await model.updateOne({ name, ...ownerFilter(owner), ...notDeleted }, { $set: { deletedAt: owed.at }, ...owing(owed) }))
          .matchedCount === 1
      );
    },

    /**
     * Inserts a new template, with the entry its creation owes (seeding owes none); `undefined`
     * when a live template has the name (unique index, race-safe). A deleted template still owing
     * its entry is taken over: its content replaced, its owed entries kept.
     */
    async insertTemplate(
      content: TemplateContent,
      source: MessageTemplate['source'],
      owed?: OwedEntry,
      creationClaimId?: string,
    ): Promise<MessageTemplate | undefined> {
      const model = await readyModel(connection);
      const given = Object.fromEntries(Object.entries(content).filter(([, value]) => value !== undefined));
      const fields = { ...given, version: 1, source, updatedAt: owed?.at ?? new Date(), ...(creationClaimId ? { creationClaimId } : {}) };
      for (let attempt = 1; attempt <= TAKE_OVER_ATTEMPTS; attempt++) {
        try {
          const created = await model.create({ ...fields, ...(owed ? { owedActivity: [owed] } : {}) });
          return toTemplate(created.toObject());
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
        }
        const unset: Record<string, 1> = { deletedAt: 1 };
        if (content.subject === undefined) unset.subject = 1;
        if (content.html === undefined) unset.html = 1;
        if (content.enterpriseId === undefined) unset.enterpriseId = 1;
        const taken = await model
          .findOneAndUpdate(
            { name: content.name, ...ownerFilter(content.enterpriseId), deletedAt: { $exists: true } },
            { $set: fields, $unset: unset, ...owing(owed) },
            { new: true },
          )
          .lean();
        if (taken) return toTemplate(taken);
        // Neither: a live template has the name, or the deleted one was removed meanwhile (insert again).
        if (await model.exists({ name: content.name, ...ownerFilter(content.enterpriseId), ...notDeleted })) return undefined;
      }
      return undefined;
    },

    /**
     * Replaces the content of an existing template and bumps its version, with the entry the
     * change owes; `undefined` when absent.
     */
    async replaceTemplateContent(
      name: string,
      owner: TemplateOwner,
      content: Omit<TemplateContent, 'name' | 'enterpriseId'>,
      owed: OwedEntry,
    ): Promise<MessageTemplate | undefined> {
      const model = await readyModel(connection);
      const unset: Record<string, 1> = {};
      if (content.subject === undefined) unset.subject = 1;
      if (content.html === undefined) unset.html = 1;
      const doc = await model
        .findOneAndUpdate(
          { name, ...ownerFilter(owner), ...notDeleted },
          {
            $set: {
              channel: content.channel,
              text: content.text,
              source: 'admin',
              updatedAt: owed.at,
              ...(content.subject !== undefined ? { subject: content.subject } : {}),
              ...(content.html !== undefined ? { html: content.html } : {}),
            },
            $inc: { version: 1 },
            ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}),
            ...owing(owed),
          },
          { new: true },
        )
        .lean();
      return doc ? toTemplate(doc) : undefined;
    },

    /** The entries template changes owe the record, by template name and owner. */
    owedActivity: createOwingCollection<OwnedName>({
      name: 'templates',
      model: () => readyModel(connection) as never,
      filter: ({ name, owner }) => ({ name, ...ownerFilter(owner) }),
      keyFields: ['name', 'enterpriseId'],
      keyOf: (doc) => ({ name: String(doc.name), owner: storedOwner(doc) }),
      // An enterprise's own template is named in that enterprise's record too.
      subject: ({ name, owner }) => ({ templateName: name, ...ownerFields(owner) }),
    }),
  };
}

export type TemplatesRepository = ReturnType<typeof createTemplatesRepository>;
