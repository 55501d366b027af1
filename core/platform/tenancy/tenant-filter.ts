import type { ClientRef, EnterpriseScope, UserRef } from './enterprise-id.js';

/*
 * The only place that turns a tenant into a MongoDB filter. Repositories take an
 * EnterpriseScope or a UserRef and spread one of these into their queries, so no query can leave
 * the enterprise out, and no caller's object can widen a filter with fields it happens to carry
 * (only the named ids are copied).
 */

/** Tenant data of one enterprise. */
export function scopeFilter(scope: EnterpriseScope): { enterpriseId: string } {
  return { enterpriseId: scope.enterpriseId };
}

/** Data that belongs to some enterprise (not the deployment's shared data, which has none). */
export function ownedByAnEnterpriseFilter(): { enterpriseId: { $exists: true } } {
  return { enterpriseId: { $exists: true } };
}

/** Tenant data of every enterprise but these. */
export function outsideEnterprisesFilter(enterpriseIds: readonly string[]): { enterpriseId: { $nin: string[] } } {
  return { enterpriseId: { $nin: [...enterpriseIds] } };
}

/** Tenant data of one user of one enterprise. */
export function userFilter(ref: UserRef): { enterpriseId: string; userId: string } {
  return { enterpriseId: ref.enterpriseId, userId: ref.userId };
}

/** Tenant data a client of one enterprise wrote. */
export function clientFilter(ref: ClientRef): { enterpriseId: string; clientId: string } {
  return { enterpriseId: ref.enterpriseId, clientId: ref.clientId };
}

/**
 * Any of these users, for a batched look-up: it also matches other pairs of the two id sets, so
 * the caller keeps only the records whose (enterpriseId, userId) it asked for.
 */
export function anyOfUsersFilter(refs: readonly UserRef[]): { enterpriseId: { $in: string[] }; userId: { $in: string[] } } {
  return {
    enterpriseId: { $in: [...new Set(refs.map((r) => r.enterpriseId))] },
    userId: { $in: [...new Set(refs.map((r) => r.userId))] },
  };
}

/** The UserRef of a stored record (only the two ids, whatever else the record holds). */
export function userRefOf(record: UserRef): UserRef {
  return { enterpriseId: record.enterpriseId, userId: record.userId };
}
