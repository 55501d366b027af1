import type { mongo } from 'mongoose';
import { signingKeyBoxContext } from '../auth/sealed-signing-jwk.js';
import { rotatedKeyName, type SigningAlg } from '../auth/signing-key.service.js';
import { callbackSecretContext } from '../clients/callback-secret.js';
import { sealContext } from '../idempotency/idempotent-requests.js';
import { resendCodeContext } from '../otp/otp-resend.service.js';
import { DEFAULT_ENTERPRISE_ID, userSubject } from '../platform/tenancy/enterprise-id.js';
import { authBoxContext } from '../push/push-subscriptions.service.js';
import { VAPID_BOX_CONTEXT, VAPID_SECRET_NAME } from '../push/vapid-keys.js';

/** One sealed value of a document: where it is (a dotted path), the box, and what the box is bound to. */
export interface SealedValue {
  path: string;
  sealed: string;
  context: string;
}

/** A collection holding values sealed with OTP_ENCRYPTION_KEY: which documents hold one, and their values. */
export interface SealedCollection {
  collection: string;
  /** The documents that may hold a sealed value (an index need not serve it: the walk reads them all once). */
  filter: mongo.Filter<mongo.Document>;
  values(doc: mongo.Document): SealedValue[];
}

const text = (value: unknown): value is string => typeof value === 'string' && value !== '';

function valuesOf(entries: [path: string, sealed: unknown, context: string][]): SealedValue[] {
  return entries.filter(([, sealed]) => text(sealed)).map(([path, sealed, context]) => ({ path, sealed: sealed as string, context }));
}

/**
 * Every value sealed with the server key kept in MongoDB, each with the context its writer bound
 * it to (a box opens only under its own context). A new sealed field is added here, or the
 * re-seal command leaves it under the old key and dropping that key loses it.
 */
export const SEALED_COLLECTIONS: readonly SealedCollection[] = [
  {
    // First signing keys ({publicJwk, privateJwkBox}), rotations ({keys: [{alg, sealed}]}), the VAPID key.
    collection: 'server_secrets',
    filter: {},
    values: (doc) => {
      const name = String(doc.name);
      const value = (doc.value ?? {}) as Record<string, unknown>;
      const rotated = Array.isArray(value.keys) ? (value.keys as { alg?: SigningAlg; sealed?: { privateJwkBox?: unknown } }[]) : [];
      return valuesOf([
        ['value.privateJwkBox', value.privateJwkBox, signingKeyBoxContext(name)],
        ...(name === VAPID_SECRET_NAME
          ? [['value.privateKeyBox', value.privateKeyBox, VAPID_BOX_CONTEXT] as [string, unknown, string]]
          : []),
        ...rotated.map(
          (key, i) =>
            [
              `value.keys.${i}.sealed.privateJwkBox`,
              key.sealed?.privateJwkBox,
              signingKeyBoxContext(rotatedKeyName(name, key.alg as SigningAlg)),
            ] as [string, unknown, string],
        ),
      ]);
    },
  },
  {
    collection: 'clients',
    filter: { callbackSecretEncrypted: { $type: 'string' } },
    values: (doc) => valuesOf([['callbackSecretEncrypted', doc.callbackSecretEncrypted, callbackSecretContext(String(doc.clientId))]]),
  },
  {
    // PLAIN digests (no context), codes kept for an interrupted request's retry and for resends.
    collection: 'otps',
    filter: { $or: [{ hashSpec: 'PLAIN' }, { codeEncrypted: { $type: 'string' } }, { resendCode: { $type: 'string' } }] },
    values: (doc) => {
      const otpUuid = String(doc._id);
      return valuesOf([
        ['digest', doc.hashSpec === 'PLAIN' ? doc.digest : undefined, ''],
        ['codeEncrypted', doc.codeEncrypted, otpUuid],
        ['resendCode', doc.resendCode, resendCodeContext(otpUuid)],
      ]);
    },
  },
  {
    collection: 'deliveries',
    filter: { secretMacros: { $type: 'string' } },
    values: (doc) => valuesOf([['secretMacros', doc.secretMacros, String(doc._id)]]),
  },
  {
    collection: 'users',
    filter: { $or: [{ 'activation.verificationKeyEncrypted': { $type: 'string' } }, { 'activation.codeEncrypted': { $type: 'string' } }] },
    values: (doc) => {
      const subject = userSubject({ enterpriseId: String(doc.enterpriseId ?? DEFAULT_ENTERPRISE_ID), userId: String(doc.userId) });
      const activation = (doc.activation ?? {}) as Record<string, unknown>;
      return valuesOf([
        ['activation.verificationKeyEncrypted', activation.verificationKeyEncrypted, subject],
        ['activation.codeEncrypted', activation.codeEncrypted, `${subject}:${String(activation.issue)}`],
      ]);
    },
  },
  {
    collection: 'push_subscriptions',
    filter: { authBox: { $type: 'string' } },
    values: (doc) => valuesOf([['authBox', doc.authBox, authBoxContext(String(doc.subscriptionId))]]),
  },
  {
    collection: 'idempotency_records',
    filter: { 'answer.sealed': { $type: 'string' } },
    values: (doc) =>
      valuesOf([['answer.sealed', (doc.answer as { sealed?: unknown } | undefined)?.sealed, sealContext(String(doc.claimId))]]),
  },
];
