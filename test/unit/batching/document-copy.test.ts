import { Binary, ObjectId } from 'mongodb';
import { copyDocument } from '../../../core/platform/batching/document-copy.js';

describe('copyDocument', () => {
  const original = () => ({
    _id: new ObjectId(),
    userId: 'u1',
    secondaryGroups: ['g2', 'g3'],
    activation: { attemptsLeft: 3, expiresAt: new Date('2026-11-29T10:00:00Z'), sentTo: [{ channel: 'SMS' }] },
    passkey: new Binary(Buffer.from('key')),
    blocked: null,
    count: 0,
  });

  test('when a document is copied, then it equals the original and no object or array of it is shared', () => {
    const doc = original();
    const copy = copyDocument(doc);
    expect(copy).toEqual(doc);
    expect(copy).not.toBe(doc);
    expect(copy.secondaryGroups).not.toBe(doc.secondaryGroups);
    expect(copy.activation).not.toBe(doc.activation);
    expect(copy.activation.sentTo[0]).not.toBe(doc.activation.sentTo[0]);
    expect(copy.activation.expiresAt).not.toBe(doc.activation.expiresAt);
    copy.secondaryGroups.push('changed');
    copy.activation.attemptsLeft = 0;
    copy.activation.expiresAt.setTime(0);
    copy.activation.sentTo[0].channel = 'EMAIL';
    expect(doc).toEqual({ ...original(), _id: doc._id, passkey: doc.passkey });
    expect(doc.activation.expiresAt.toISOString()).toBe('2026-11-29T10:00:00.000Z');
  });

  test('when a document holds driver types, then the copy keeps them as they are (structuredClone made plain objects of them)', () => {
    const doc = original();
    const copy = copyDocument(doc);
    expect(copy._id).toBeInstanceOf(ObjectId);
    expect(copy._id.equals(doc._id)).toBe(true);
    expect(copy.passkey).toBeInstanceOf(Binary);
    expect(structuredClone(doc)._id).not.toBeInstanceOf(ObjectId);
  });
});
