/** BullMQ's lowest priority (priorities run from 1, the highest, to 2^21). */
const LOWEST_PRIORITY = 2 ** 21;

/**
 * The BullMQ priority of an OTP's dispatch jobs, from how many OTPs its enterprise has sent in
 * the current window of its rate limit (this one included). The dispatch queue is one for every
 * enterprise and BullMQ takes jobs without a priority before prioritized ones: an enterprise's
 * first `fairShare` OTPs of a window go without one (first-come-first-served, BullMQ's cheapest
 * path), each further `fairShare` one priority lower. A burst of one enterprise then queues behind
 * the next OTP of every enterprise that sends less, while its own jobs keep their order (their
 * priority only grows within a window; equal priorities are first-in-first-out). Undefined: no
 * priority. `fairShare` 0: never one.
 */
export function dispatchPriority(sentInWindow: number, fairShare: number): number | undefined {
  if (fairShare <= 0 || !Number.isFinite(sentInWindow) || sentInWindow <= fairShare) return undefined;
  return Math.min(Math.ceil((sentInWindow - fairShare) / fairShare), LOWEST_PRIORITY);
}
