/**
 * Two kinds of ids hold a user id, and user ids are often e-mail addresses or phone numbers:
 * activation delivery ids, `activation-[<base64url enterpriseId>.]<base64url userId>-<issue>-<channel>`
 * (the dispatch job id too), and enrollment job ids, `enroll-[<enterpriseId>~]<userId>-<issue>`.
 * They must stay as they are (a retry is idempotent because it builds the same id, and rows and jobs
 * already in flight carry them), so log lines show them with the user id replaced by `***`; the
 * enterprise, issue and channel stay, to tell lines apart. The formats are built in
 * `core/users/activation-deliveries.service.ts` and `core/platform/queues/enrollment.queue.ts`,
 * which this layer cannot import; `test/unit/platform/logger.test.ts` logs ids built by both.
 */

// Each prefix takes the run of id characters after it whole, bounded by the longest id (two
// 64-character ids, base64url adding a third, and the suffix): a match never fails once started,
// so a line full of prefixes (a long request path) is read once, not once per prefix. The run is
// then split where the id's own suffix says, the user id being everything before it.
const ACTIVATION_RUN = /\bactivation-([A-Za-z0-9_.-]{1,200})/g;
const ACTIVATION_PARTS = /^(?:([A-Za-z0-9_-]+)\.)?[A-Za-z0-9_-]+(-[0-9]+-(?:EMAIL|SMS)(?![A-Za-z0-9_])[\s\S]*)$/;
const ENROLLMENT_RUN = /\benroll-([A-Za-z0-9._@~-]{1,160})/g;
const ENROLLMENT_PARTS = /^(?:([A-Za-z0-9._@-]+)~)?[A-Za-z0-9._@-]+(-[0-9]+(?![A-Za-z0-9_@-])[\s\S]*)$/;

function masked(prefix: string, separator: string, parts: RegExp): (run: string, tail: string) => string {
  return (run, tail) => {
    const found = parts.exec(tail);
    if (!found) return run;
    const [, enterprise, suffix] = found;
    return `${prefix}${enterprise === undefined ? '' : `${enterprise}${separator}`}***${suffix as string}`;
  };
}

const maskActivation = masked('activation-', '.', ACTIVATION_PARTS);
const maskEnrollment = masked('enroll-', '~', ENROLLMENT_PARTS);

/** Replaces the user id inside every activation delivery id and enrollment job id of a text. */
export function maskUserIdsInIds(text: string): string {
  // Most lines hold neither: one plain scan each instead of the regular expressions.
  const activations = text.includes('activation-') ? text.replace(ACTIVATION_RUN, maskActivation) : text;
  return activations.includes('enroll-') ? activations.replace(ENROLLMENT_RUN, maskEnrollment) : activations;
}
