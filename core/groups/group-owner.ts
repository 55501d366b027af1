import { scopeFilter } from '../platform/tenancy/tenant-filter.js';

/**
 * Who a group belongs to: one enterprise (its `enterpriseId`), or, without one, every enterprise
 * (the shared groups). Names are unique per owner, so an enterprise may have its own `retail`
 * beside the shared one; its users' `retail` then means its own.
 */
export type GroupOwner = string | undefined;

/** The MongoDB filter of one owner's groups: an enterprise's own, or the shared ones. */
export function groupOwnerFilter(owner: GroupOwner): Record<string, unknown> {
  return owner === undefined ? { enterpriseId: { $exists: false } } : scopeFilter({ enterpriseId: owner });
}

/** `{ enterpriseId }` of an enterprise's own group, nothing for a shared one (answers, activity entries). */
export function groupOwnerFields(owner: GroupOwner): { enterpriseId?: string } {
  return owner === undefined ? {} : scopeFilter({ enterpriseId: owner });
}

/** The owner of a stored group document: its `enterpriseId`, or none for a shared group. */
export function storedGroupOwner(doc: { enterpriseId?: unknown }): GroupOwner {
  return typeof doc.enterpriseId === 'string' ? doc.enterpriseId : undefined;
}

/** A group as its owner names it: the key of what its changes owe the record. */
export interface OwnedGroupName {
  name: string;
  owner: GroupOwner;
}
