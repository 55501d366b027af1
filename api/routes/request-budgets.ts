import { userKey } from '../../core/platform/tenancy/enterprise-id.js';
import { isStoreUnavailable } from '../../core/platform/db/store-unavailable.js';
import { AppError } from '../../core/platform/errors/app-error.js';
import type { EnterpriseApiLimits, LimitName } from '../../core/platform/throttling/enterprise-api-limits.js';
import type { BudgetState } from '../../core/platform/throttling/rate-limit-headers.js';

/** The limits one request took, and how to give them back. */
export interface TakenBudgets {
  /** Settles with the budgets' states (the RateLimit headers), or rejects with the 429. */
  admission: Promise<BudgetState[]>;
  /** Gives back what was taken (the request sent nothing). */
  refund: () => Promise<void>;
}
/** The limits one request that sends a message to a person took. */
export interface PersonBudgets extends TakenBudgets {
  /**
   * Messages the enterprise has sent in the current window of its budget, this one included, once
   * admitted (never rejects: undefined when the request was refused).
   */
  enterpriseSent: Promise<number | undefined>;
}

/** What a request sends to a person: an OTP, or an approval notification to answer. */
export type PersonMessage = 'otp' | 'notifications';

const BUDGETS_OF: Record<PersonMessage, { perClient: LimitName; perEnterprise: LimitName; perUser: LimitName }> = {
  otp: { perClient: 'otpPerClient', perEnterprise: 'otpPerEnterprise', perUser: 'otpPerUser' },
  notifications: { perClient: 'notificationsPerClient', perEnterprise: 'notificationsPerEnterprise', perUser: 'notificationsPerUser' },
};

/**
 * Takes one point of each budget a message sent to a person uses: the client's, the enterprise's
 * across its clients (one tenant cannot take the deployment's sending by registering more
 * clients), and the user's across the enterprise's clients (several backends together cannot
 * flood one person, and one enterprise never uses up another's budget for a userId they share).
 */
export function takePersonBudgets(
  limits: EnterpriseApiLimits,
  message: PersonMessage,
  ref: { clientId: string; enterpriseId: string; userId: string; test?: boolean },
): PersonBudgets {
  const { perClient, perEnterprise, perUser } = BUDGETS_OF[message];
  const taken = takeBudgets(
    limits,
    [
      { name: perClient, key: ref.clientId },
      { name: perEnterprise, key: ref.enterpriseId },
      { name: perUser, key: userKey({ enterpriseId: ref.enterpriseId, userId: ref.userId }) },
    ],
    ref.test === true,
  );
  return withEnterpriseSent(taken);
}

/**
 * Takes the budgets of an enrollment that sends an activation code: the client's and the
 * enterprise's (a person is enrolled once, so no per-user budget).
 */
export function takeEnrollmentBudgets(
  limits: EnterpriseApiLimits,
  ref: { clientId: string; enterpriseId: string },
  test: boolean,
): PersonBudgets {
  return withEnterpriseSent(
    takeBudgets(
      limits,
      [
        { name: 'enrollmentMessagesPerClient', key: ref.clientId },
        { name: 'enrollmentMessagesPerEnterprise', key: ref.enterpriseId },
      ],
      test,
    ),
  );
}

/** What the enterprise's budget (the second taken: client, enterprise, ...) counted in its window. */
function withEnterpriseSent(taken: TakenBudgets): PersonBudgets {
  const enterpriseSent = taken.admission.then(
    ([, enterprise]) => (enterprise === undefined ? undefined : enterprise.quota - enterprise.remaining),
    () => undefined,
  );
  return { ...taken, enterpriseSent };
}

/**
 * Takes one point of each budget at once. `test`: a test client's request (its traffic counts
 * against per-user budgets of its own, see createEnterpriseApiLimits).
 */
export function takeBudgets(limits: EnterpriseApiLimits, budgets: { name: LimitName; key: string }[], test: boolean): TakenBudgets {
  const taken = Promise.allSettled(budgets.map((b) => limits.consume(b.name, b.key, test)));
  // Once only: a request refused 429 has already given its points back when its route calls refund.
  let givenBack: Promise<void> | undefined;
  const refund = () =>
    (givenBack ??= taken.then(async (outcomes) => {
      await Promise.all(budgets.map((b, i) => (outcomes[i]?.status === 'fulfilled' ? limits.refund(b.name, b.key, test) : undefined)));
    }));
  const admission = taken.then(async (outcomes) => {
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    if (refused) {
      // A refused request sends nothing, so the budgets that admitted it get their point back: a
      // client over its own budget that keeps asking would otherwise go on spending its
      // enterprise's budget (its other clients refused) and a person's (that person locked out).
      await refund();
      throw refused.reason;
    }
    return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<BudgetState>).value);
  });
  // A request refused before it awaits its admission (a field the caller got wrong) must not leave
  // a 429 nobody handles: Node ends the process on an unhandled rejection. Awaiting it still throws.
  admission.catch(() => undefined);
  return { admission, refund };
}

/**
 * Where the budgets stood when they admitted the request, for the RateLimit headers of a refusal
 * that came after (an unknown user, a template that does not exist): a caller throttling itself
 * from the headers keeps them on such answers too. None when a budget refused it: the 429 names
 * the spent budget itself. Costs no round trip: the admission has settled, or is settling anyway.
 */
export const admittedStates = (taken: Pick<TakenBudgets, 'admission'>): Promise<BudgetState[]> => taken.admission.catch(() => []);

/**
 * Points go back when the request sent nothing to the person and the person did nothing: refused
 * for the caller's own mistake (anything but a spent budget or a failed dependency), or not
 * accepted because the service could not store it (MongoDB unreachable, or the request's deadline
 * passed: unavailable, nothing queued). An outage never uses up a person's budget, however often
 * the caller retries through it.
 */
export const refundable = (err: unknown): boolean =>
  isStoreUnavailable(err) || (err instanceof AppError && err.kind !== 'rate-limited' && err.kind !== 'dependency-failed');
