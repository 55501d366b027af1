import type { Channel, Delivery, DeliveryKind, DeliveryState } from './delivery.types.js';

/** Why a selected delivery is not sent again; `code` is stable, `reason` is for people. */
export type ReplaySkipCode =
  'not-found' | 'not-failed' | 'request-not-answered' | 'expired' | 'ended' | 'code-not-kept' | 'replayed-meanwhile';

export interface ReplaySkip {
  code: ReplaySkipCode;
  reason: string;
}

/**
 * Whether the message a row carries is still wanted: undefined when it is, else why not (its OTP
 * was used or locked, the user activated, a newer activation code replaced it). One per kind,
 * given by the feature that owns the kind.
 */
export type StillWantedCheck = (delivery: Delivery, now: Date) => Promise<ReplaySkip | undefined>;

/** The filters of the operators' list; a replay by filter takes the same ones. */
export interface DeliveryFilter {
  state: DeliveryState;
  channel?: Channel;
  provider?: string;
  kind?: DeliveryKind;
  since?: Date;
}

/** A delivery as operators see it: no code, the address and any address in the error masked. */
export interface DeliveryView {
  id: string;
  kind: DeliveryKind;
  enterpriseId: string;
  /** The OTP uuid, or the (masked) user id of an activation. */
  refId: string;
  channel: Channel;
  to: string;
  template: string;
  state: DeliveryState;
  provider?: string;
  lastError?: string;
  attempts: number;
  replays: number;
  queuedAt: Date;
  updatedAt: Date;
  notAfter: Date;
}

export type ReplaySelection = { ids: string[] } | { filter: DeliveryFilter };

export interface ReplayRequest {
  selection: ReplaySelection;
  dryRun: boolean;
  comments?: string;
}

export interface ReplayResult {
  dryRun: boolean;
  /** Queued again (in a dry run: would be). */
  queued: DeliveryView[];
  skipped: (Partial<DeliveryView> & { id: string; skip: ReplaySkip })[];
  /** A filter matched more FAILED rows than one request takes: run it again for the rest. */
  more: boolean;
}
