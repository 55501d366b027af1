import type { RateLimit } from '../platform/config/config.js';
import type { RedisClient } from '../platform/queues/redis-connection.js';
import { callerBlock } from '../platform/throttling/caller-block.js';
import { createFailureBudget } from '../platform/throttling/failure-budget.js';

export interface ClientAuthenticationLimitsConfig {
  /** Failed authentications of one client from one caller address. */
  perClientAddress: RateLimit;
  /** Failed client authentications from one caller address, whatever the client. */
  perAddress: RateLimit;
}

/** Which budget a failure spent: the one of (client, address), or the address's. */
export type SpentBudget = 'client-address' | 'address';

/** What counting one failed client authentication did. */
export interface ClientAuthenticationFailure {
  /** The failure came after a budget was spent (counted elsewhere first): it is to be refused too. */
  refused: boolean;
  /** Milliseconds before this address may try again (for this client, or at all); 0 while failures are left. */
  waitMs: number;
  /** The budgets this failure spent (each is reported once, when it is spent). */
  spent: SpentBudget[];
}

/**
 * Limits on failed client authentication at the endpoints that authenticate clients (token,
 * introspection, revocation): online guessing of client secrets, and floods of made-up client
 * ids. Failures are counted per (client, caller address) and per caller address, never per client
 * alone: a client_id is public (it is in every authorization URL), so a budget of the client's
 * own would let anyone lock the real client out by sending wrong secrets for it. Successes are
 * not counted and do not start a count over: they cost nothing here, and a success from an
 * address shared with a guesser (a cloud NAT) cannot buy the guesser more tries. Unknown client
 * ids count for the address only: there is no secret of theirs to guess. An IPv6 address counts
 * as its /64 (callerBlock): one host may send from any address of it.
 */
export function createClientAuthenticationLimits(redis: RedisClient, prefix: string, config: ClientAuthenticationLimitsConfig) {
  const perClientAddress = createFailureBudget(redis, prefix, { name: 'clientAuth:clientAddress', ...config.perClientAddress });
  const perAddress = createFailureBudget(redis, prefix, { name: 'clientAuth:address', ...config.perAddress });
  const pairOf = (clientId: string, address: string) => `${clientId}|${callerBlock(address)}`;

  return {
    /** True when this process knows of no spent budget: a request needs no look at all (the usual case). */
    isQuiet(): boolean {
      return perClientAddress.isQuiet() && perAddress.isQuiet();
    },

    /** Milliseconds before this address may authenticate any client again; 0 when it may now. */
    addressWaitMs(address: string): number {
      return perAddress.waitMs(callerBlock(address));
    },

    /** Milliseconds before this address may authenticate this client again; 0 when it may now. */
    clientWaitMs(clientId: string, address: string): number {
      return perClientAddress.waitMs(pairOf(clientId, address));
    },

    /** Counts one failed client authentication from `address`; `clientId` only when the client exists. */
    async countFailure(address: string, clientId: string | undefined): Promise<ClientAuthenticationFailure> {
      const [pair, overall] = await Promise.all([
        clientId === undefined ? undefined : perClientAddress.countFailure(pairOf(clientId, address)),
        perAddress.countFailure(callerBlock(address)),
      ]);
      const spent: SpentBudget[] = [];
      if (pair && pair.waitMs > 0 && !pair.refused) spent.push('client-address');
      if (overall.waitMs > 0 && !overall.refused) spent.push('address');
      return {
        refused: (pair?.refused ?? false) || overall.refused,
        waitMs: Math.max(pair?.waitMs ?? 0, overall.waitMs),
        spent,
      };
    },
  };
}

export type ClientAuthenticationLimits = ReturnType<typeof createClientAuthenticationLimits>;
