import { pino, type Logger } from 'pino';
import { maskUserIdsInIds } from './ids-with-user-ids.js';
import { maskUrlEncodedContacts } from './url-encoded-contacts.js';

export type { Logger };

// Never log secrets or OTP codes: the values of these fields are replaced wherever they appear in
// a log object (any depth, inside headers too: bearer tokens, cookies, webhook signatures).
const SECRET_KEYS = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'x-twilio-signature',
  'password',
  'secret',
  'client_secret',
  'clientSecret',
  'token',
  'accessToken',
  'access_token',
  'otp',
  'code',
  'activationCode',
  'predefinedCode',
  'adminToken',
  'apiKey',
  'authToken',
]);
const CENSOR = '[REDACTED]';

/** Keeps the last 2 digits of a phone number: enough to tell deliveries apart, not to identify. */
export function maskPhone(value: string): string {
  const digits = value.replace(/[^0-9]/g, '');
  if (digits.length < 4) return '***';
  return `${value.startsWith('+') ? '+' : ''}${'*'.repeat(digits.length - 2)}${digits.slice(-2)}`;
}

/** Keeps the first character of the local part and the domain: `j***@example.com`. */
export function maskEmail(value: string): string {
  const at = value.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${value[0]}***${value.slice(at)}`;
}

// Starts only where a local part can start: without the look-behind every character of a long
// run (a 20 kB path segment) was tried as a start, quadratic work on every log line (1.9 s).
// A local part may hold the address format's other characters too (`o'brien`, `a!b`, `{c~d}`):
// left out, the part before one stayed whole. '/', '?', '=' and '&' are allowed there as well but
// end it here, so a path or query around an address keeps its shape.
const LOCAL_PART_CHAR = "[A-Za-z0-9._%+!#$'*^`{|}~-]";
const EMAIL_RE = new RegExp(`(?<!${LOCAL_PART_CHAR})${LOCAL_PART_CHAR}+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}`, 'g');
// Ten or more digits, spaces, dashes or brackets, standing alone: a run glued to letters, dots or
// dashes is part of an id, a hash, a UUID or a timestamp, and a bare JSON number (after `:`, `,`
// or `[`) is a count or a time, so those are kept whole. A letter right after a backslash is a
// JSON escape (`\n+1555...`), not part of a word.
//
// Read in two steps so that a line costs time in proportion to its length. The expression takes a
// number's possible start and the whole run of digits and separators after it, without backtracking;
// `phoneEnd` then finds the run's last digit that can end a number. A single expression that
// backtracked to that digit tried every start in a run to the run's end: a request path of
// `(1-(1-(1-...` (16 kB, which anyone can send) cost 0.45 s of CPU on the line that logged it. Every
// later start in a run has the same last digit and is shorter, so none of them can do better.
// A `+` after `:`, `,` or `[` does start a number: no JSON number has one, and a unique-key error
// quotes the live-mobile key as `acme:+15550100002` (also `tel:+1555...`, `[+1555...,+1555...]`).
// So does an unbroken run of ten to fifteen digits after a word and a colon: a user's key is
// `<enterpriseId>:<userId>` (`default:15551234567`), and a JSON number follows a quote and a colon,
// never a word and one (`"count":15551234567` stays whole).
// So does an unbroken run of ten to fifteen digits (a number's length in E.164) after a word and an
// underscore or a dash: a user id may be written `user_5551234567` or `acct-5551234567` (enterprises
// that key users by number prefix it so). A run glued directly to letters stays an id or a hash
// (`abc1234567890`), a longer one a token, and one after a lone dash a negative number; a uuid's
// last group (`550e8400-e29b-41d4-a716-446655440000`) is kept by `maskRun`: a look-behind for the
// uuid here cost a request line holding one 0.2 us (its twelve digits were then tried one by one).
// After a word and an underscore or a dash, a number may also be written in dashed groups
// (`acct-555-123-4567`, `fr-06-12-34-56-78`): groups of one to four digits and a last of up to
// eleven, the chain ending there (no digit, no dash and digit after it: a uuid's digit groups run on).
// The leading `(?=[+0-9])` is what a number starts with, tested before the look-behinds: most of a
// line's positions then fail on one character. No start follows a digit, and `(?<![0-9])` says so
// first: a digit inside a run then fails on one look-behind instead of one per start.
const PHONE_START_RE =
  /(?=[+0-9])(?<![0-9])(?:(?<!(?<!\\)[A-Za-z0-9_.+:,[-])|(?<=[:,[](?=\+))|(?<=[A-Za-z0-9]:)(?=[0-9]{10,15}(?![0-9]))|(?<=[A-Za-z0-9][_-])(?=\+?(?:[0-9]{10,15}(?![0-9])|(?:[0-9]{1,4}-){1,5}[0-9]{1,11}(?![0-9]|-[0-9]))))\+?[0-9][0-9 ()-]*/g;
// A number written with dots or underscores (`555.123.4567`, `555_123_4567`, `+1.555.123.4567`,
// `06.12.34.56.78`, after a country code `+1 555.123.4567`, after an area code in brackets
// `(555) 123.4567`), or with those and dashes (`555.123-4567`, `1-555.123.4567`): digit groups
// joined by single dots, underscores or dashes, standing alone as above. A user id may be written
// so (its format allows dots, underscores and dashes), and its requests' paths and the unique-key
// errors that quote it are logged; provider error texts quote numbers as their caller wrote them.
// The expression takes every such chain whole; `isNumberChain` decides which can be a number.
// Starts are only where a chain starts (a digit, a `+` or a bracket that nothing glues to the
// left, or that follows a letter and an underscore or a dash: a prefixed user id, `user_555.123.4567`;
// not a digit and one, as inside a chain every group would then be a start) and the groups and their
// separators cannot be split two ways, so a line costs time in proportion to its length here too.
// No start follows a digit, and `(?<![0-9])` says so first: a digit inside a chain then fails on
// one look-behind instead of one per start (without it, the third start made the masking of a JSON
// request line, whose IP address runs this pass, cost about a quarter more).
const DOTTED_PHONE_RE =
  /(?=[+0-9(])(?<![0-9])(?:(?<!(?<!\\)[A-Za-z0-9_.+:,[-])|(?<=[:,[](?=\+))|(?<=[A-Za-z][_-]))(?:\+[0-9]{1,3}[ -])?(?:\([0-9]{1,4}\) ?)?\+?[0-9]+(?:[._-][0-9]+)+(?!\.?[A-Za-z0-9_-])/g;
// The same, and a chain may start with an area code in brackets right after a word too: a message
// quoting a call (`fn(555) 123.4567`, `to(555)123.4567`). Used only on lines with a bracket: the
// third start made the pass cost a JSON request line (it holds an IP address, so the pass runs on
// it) 0.1 us more. Its bracket is read before the look-behind, so most positions fail at once.
const DOTTED_PHONE_OR_AFTER_WORD_RE =
  /(?=[+0-9(])(?:\((?<=[A-Za-z0-9]\()[0-9]{1,4}\) ?|(?<![0-9])(?:(?<!(?<!\\)[A-Za-z0-9_.+:,[-])|(?<=[:,[](?=\+))|(?<=[A-Za-z][_-]))(?:\+[0-9]{1,3}[ -])?(?:\([0-9]{1,4}\) ?)?)\+?[0-9]+(?:[._-][0-9]+)+(?!\.?[A-Za-z0-9_-])/g;
// What every chain `isNumberChain` accepts holds, found without look-behinds: three groups or more
// with a dot or an underscore between two of them and a middle group of at most four digits, two
// groups whose second holds six digits or more, or a bracketed area code before a dotted group.
// Most log lines (a request's, with its uuids and decimal response time) hold none and skip that
// pass, which otherwise nearly doubled the masking's cost. This test runs on every line, so it is
// kept cheap: every alternative starts with a digit (one that started with `)` made V8 try each
// position of the line against every alternative: 0.4 us more for a JSON request line), and a line
// with no underscore (most) is tested for dots alone, a literal the engine finds faster than a class.
const DOTTED_CHAIN_HINT = /[0-9](?:\.[0-9](?:[0-9]{0,3}[.-][0-9]|[0-9]{5})|[-)] ?[0-9]{1,4}\.[0-9])/;
const DOTTED_OR_UNDERSCORED_CHAIN_HINT = /[0-9](?:[._][0-9](?:[0-9]{0,3}[._-][0-9]|[0-9]{5})|[-)] ?[0-9]{1,4}[._][0-9])/;
const DIGIT_GROUPS_RE = /[0-9]+/g;
const DOT_OR_UNDERSCORE_JOIN_RE = /[0-9][._][0-9]/;
const IPV4_RE = /^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$/;
// Year-month-day or day-month-year, with dots, dashes or underscores, at the start of a run: a
// timestamp's date (`2026-11-29 12:34:56` is ten digits and separators before its first colon,
// `2026_11_29_12_34_56` a file name's).
const DATE_START_RE =
  /^(?:(?:19|20)[0-9]{2}([._-])(?:0[1-9]|1[0-2])\1(?:0[1-9]|[12][0-9]|3[01])|(?:0[1-9]|[12][0-9]|3[01])([._-])(?:0[1-9]|1[0-2])\2(?:19|20)[0-9]{2})(?![0-9])/;
/** The longest number E.164 allows, country code included. */
const MAX_PHONE_DIGITS = 15;
// The most digits a number's last group holds after a country or area code (`1.5551234567`,
// `44.7700900123`): a longer one is a decimal's fraction (`3.14159265358979`).
const MAX_LAST_GROUP_DIGITS = 11;
/** Digits and separators from the start (an optional `+` and one digit) to the last digit: at least ten. */
const MIN_PHONE_LENGTH = 10;
// The most digits a number can be dialled with: a three-digit exit prefix (`011`) and the fifteen
// E.164 allows. One unbroken run of more is an id or a time (MongoDB's `$timestamp`
// `7306549806498217985`, an ObjectId that happens to hold no letter), and is kept whole.
const MAX_DIALLED_DIGITS = 18;
const ONLY_DIGITS_RE = /^[0-9]+$/;
// No number is written in more groups than six (`+33.6.12.34.56.78` has six); longer chains are
// OIDs (`1.3.6.1.4.1.311.21.8`) and versions.
const MAX_PHONE_GROUPS = 6;
// A group that is a lone 0 (`Chrome/120.0.6099.109`, `0.1234567891`): versions and fractions
// are written so, numbers are not (a trunk 0 is written in brackets, `+44 (0)20`).
const LONE_ZERO_GROUP_RE = /(?:^|[._-])0(?![0-9])/;
// Country codes of one digit: North America's and Russia's. A two-group chain whose first group is
// another single digit is a decimal (`3.245870083`).
const ONE_DIGIT_COUNTRY_CODES = new Set(['1', '7']);
const DIGIT_RE = /[0-9]/;
// A uuid's first four groups and the dash before its last (`550e8400-e29b-41d4-a716-`).
const UUID_HEAD_LENGTH = 24;
const DASH = 0x2d;
const UNDERSCORE = 0x5f;
const UUID_LAST_GROUP_LENGTH = 12;
// What a number may not be glued to on its right.
const GLUED_RE = /^\.?[A-Za-z0-9_-]/;
// A suffix glued to a number by an underscore (`5551234567_old`, `555-123-4567_2`): the run stops
// before the underscore. One glued by a dash and a letter (`5551234567-old`) leaves the dash at the
// run's end (a dash and digits join the run: `5551234567-2` is read as one number).
const UNDERSCORE_SUFFIX_RE = /^_[A-Za-z0-9]/;
const LETTER_RE = /^[A-Za-z]/;
// An extension written right after the number (`555-123-4567x89`, `+1-555-123-4567ext12`): no hash
// or uuid holds an `x` or a `t`, so this cannot cut one.
const EXTENSION_RE = /^(?:x[0-9]|ext)/i;
// A user id keyed by number may carry a suffix (a second or renamed account), so a number of ten to
// fifteen digits (E.164's length) is masked before one. Thirteen digits starting with 1 are kept:
// that is an epoch in milliseconds (2001 to 2033), as in `job_1701234567890_x` or
// `1701234567890-a1b2c3`, and no number has that shape (North America's, country code 1, have
// eleven digits in all); a `+` says it is a number all the same.
const EPOCH_MS_DIGITS = 13;
const ONE = 0x31;

const isDigitCode = (code: number) => code >= 0x30 && code <= 0x39;

function digitsBefore(run: string, end: number): number {
  let digits = 0;
  for (let i = 0; i < end; i++) if (isDigitCode(run.charCodeAt(i))) digits++;
  return digits;
}

/** Where the number in `run` ends when a suffix or an extension is glued to it; 0 when none. */
function suffixedNumberEnd(run: string, after: string): number {
  // Most runs end at a space, a quote or a slash: one character code says so before any expression.
  const lower = after.charCodeAt(0) | 0x20;
  if (after.charCodeAt(0) !== UNDERSCORE && (lower < 0x61 || lower > 0x7a)) return 0;
  const end =
    UNDERSCORE_SUFFIX_RE.test(after) || EXTENSION_RE.test(after)
      ? run.length
      : run.endsWith('-') && LETTER_RE.test(after)
        ? run.length - 1
        : 0;
  if (end === 0 || !isDigitCode(run.charCodeAt(end - 1))) return 0;
  const digits = digitsBefore(run, end);
  if (digits < MIN_PHONE_LENGTH || digits > MAX_PHONE_DIGITS) return 0;
  return digits === EPOCH_MS_DIGITS && run.charCodeAt(0) === ONE ? 0 : end;
}

/**
 * Where the number in `run` (found at `offset` of `text`) ends: after its last digit that is
 * followed by a space or a bracket inside the run, that ends the run with nothing glued to it, or
 * that a suffix is glued to; 0 when no digit can end one.
 */
function phoneEnd(run: string, text: string, offset: number): number {
  const after = text.slice(offset + run.length, offset + run.length + 3);
  const suffixed = suffixedNumberEnd(run, after);
  if (suffixed > 0) return suffixed;
  const glued = GLUED_RE.test(after);
  for (let end = run.length - 1; end >= 0; end--) {
    if (!DIGIT_RE.test(run[end] as string)) continue;
    const next = run[end + 1];
    if (next === undefined ? !glued : next === ' ' || next === '(' || next === ')') return end + 1;
  }
  return 0;
}

// EC2 names its hosts after their private address (`ip-172-31-25-143`), and pino writes the host
// name on every line: four groups of at most three digits, each at most 255, after `ip-`, are kept.
const EC2_HOST_PREFIX = 'ip-';
const WORD_CHAR_RE = /[A-Za-z0-9]/;
const DASHED_IPV4_RE = /^[0-9]{1,3}(?:-[0-9]{1,3}){3}$/;

/**
 * Whether a number glued to a word (its run follows an underscore or a dash) is kept: with fewer
 * than ten digits (`ts-12-34-56-789`), or an EC2 host's address.
 */
function keptAfterWord(number: string, whole: string, offset: number): boolean {
  const before = whole.charCodeAt(offset - 1);
  if (before !== DASH && before !== UNDERSCORE) return false;
  if (digitsBefore(number, number.length) < MIN_PHONE_LENGTH) return true;
  return (
    DASHED_IPV4_RE.test(number) &&
    whole.startsWith(EC2_HOST_PREFIX, offset - EC2_HOST_PREFIX.length) &&
    !WORD_CHAR_RE.test(whole.charAt(offset - EC2_HOST_PREFIX.length - 1)) &&
    number.split('-').every((group) => Number(group) <= 255)
  );
}

/** The run with its number masked, if it holds one of at least ten digits. */
function maskNumberInRun(run: string, whole: string, offset: number): string {
  const end = phoneEnd(run, whole, offset);
  const length = end - (run.startsWith('+') ? 1 : 0);
  if (length < MIN_PHONE_LENGTH || (length > MAX_DIALLED_DIGITS && ONLY_DIGITS_RE.test(run.slice(0, end)))) return run;
  const number = run.slice(0, end);
  return keptAfterWord(number, whole, offset) ? run : `${maskPhone(number)}${run.slice(end)}`;
}

const isHexCode = (code: number) => isDigitCode(code) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);

/**
 * Whether the run at `offset` is a uuid's last group: twelve digits after the uuid's first four
 * groups (`550e8400-e29b-41d4-a716-446655440000`). Read a character at a time, without a regular
 * expression: a request's line holds a uuid, and this runs for each whose last group is all digits.
 */
function isUuidLastGroup(run: string, offset: number, whole: string): boolean {
  if (offset < UUID_HEAD_LENGTH || run.length < UUID_LAST_GROUP_LENGTH || isDigitCode(run.charCodeAt(UUID_LAST_GROUP_LENGTH))) return false;
  for (let i = 0; i < UUID_LAST_GROUP_LENGTH; i++) if (!isDigitCode(run.charCodeAt(i))) return false;
  const head = offset - UUID_HEAD_LENGTH;
  for (let at = head; at < offset; at++) {
    const code = whole.charCodeAt(at);
    const dash = at === head + 8 || at === head + 13 || at === head + 18 || at === offset - 1;
    if (dash ? code !== DASH : !isHexCode(code)) return false;
  }
  return true;
}

/**
 * A run that starts with a date keeps it; a number may still follow it after a space or a bracket
 * (a dash there glues the rest to the date). A uuid's last group is kept, and the rest of its run
 * read on its own.
 */
function maskRun(run: string, offset: number, whole: string): string {
  // Too short to hold a number of ten digits: most runs of a log line (a status, a pid, a time).
  if (run.length < MIN_PHONE_LENGTH) return run;
  if (isUuidLastGroup(run, offset, whole)) {
    let next = UUID_LAST_GROUP_LENGTH;
    while (next < run.length && !isDigitCode(run.charCodeAt(next))) next++;
    if (run.length - next < MIN_PHONE_LENGTH) return run;
    return `${run.slice(0, next)}${maskRun(run.slice(next), offset + next, whole)}`;
  }
  const date = run.startsWith('+') ? undefined : DATE_START_RE.exec(run)?.[0];
  if (date === undefined) return maskNumberInRun(run, whole, offset);
  const rest = run.slice(date.length);
  const digit = rest.search(DIGIT_RE);
  if (digit <= 0 || rest[digit - 1] === '-') return run;
  return `${date}${rest.slice(0, digit)}${maskNumberInRun(rest.slice(digit), whole, offset + date.length + digit)}`;
}

/** Four groups of at most three digits, each at most 255: an IPv4 address, such as every request's caller. */
function isIpv4Address(chain: string, groups: string[]): boolean {
  return IPV4_RE.test(chain) && groups.every((group) => Number(group) <= 255);
}

/**
 * Whether a chain of digit groups can be a phone number: ten digits or more, in six groups at most,
 * a dot or an underscore between two groups (dashes alone are PHONE_START_RE's), groups of one to
 * four digits (a longer group is a build, a time or an id) except the last of two or three
 * (`555.1234567`, `1.555.1234567`: then of eleven digits at most, fifteen in all, after a first
 * group of two digits or more or a one-digit country code), and no lone 0 group, IPv4 address or
 * date (a `+` says it is a number all the same).
 */
function isNumberChain(chain: string): boolean {
  const groups = chain.match(DIGIT_GROUPS_RE) ?? [];
  const digits = groups.reduce((sum, group) => sum + group.length, 0);
  if (digits < MIN_PHONE_LENGTH || groups.length > MAX_PHONE_GROUPS || !DOT_OR_UNDERSCORE_JOIN_RE.test(chain)) return false;
  const first = groups[0] as string;
  const last = groups.length - 1;
  const shortGroups = groups.every((group) => group.length <= 4);
  const longLastGroup =
    groups.length <= 3 &&
    digits <= MAX_PHONE_DIGITS &&
    (first.length > 1 || ONE_DIGIT_COUNTRY_CODES.has(first)) &&
    (groups[last] as string).length <= MAX_LAST_GROUP_DIGITS &&
    groups.slice(0, last).every((group) => group.length <= 4);
  if (!shortGroups && !longLastGroup) return false;
  if (chain.startsWith('+')) return true;
  return !(LONE_ZERO_GROUP_RE.test(chain) || isIpv4Address(chain, groups) || DATE_START_RE.test(chain));
}

/** The chain masked, a bracket it starts with kept (as PHONE_START_RE's runs keep theirs). */
function maskChain(chain: string): string {
  if (!isNumberChain(chain)) return chain;
  return chain.startsWith('(') ? `(${maskPhone(chain.slice(1))}` : maskPhone(chain);
}

/** Masks every e-mail address and phone number inside free text (log messages, URLs, log lines). */
export function maskContactsInText(text: string): string {
  return maskPlainContacts(maskUrlEncodedContacts(text, maskPlainContacts));
}

/** Masks the e-mail addresses and phone numbers written as they are, not URL-encoded. */
function maskPlainContacts(text: string): string {
  const masked = maskEmailsInText(text).replace(PHONE_START_RE, maskRun);
  const hint = masked.includes('_') ? DOTTED_OR_UNDERSCORED_CHAIN_HINT : DOTTED_CHAIN_HINT;
  if (!hint.test(masked)) return masked;
  return masked.replace(masked.includes('(') ? DOTTED_PHONE_OR_AFTER_WORD_RE : DOTTED_PHONE_RE, maskChain);
}

/** Masks e-mail addresses only: for text whose long digit runs are ids, not phone numbers. */
export function maskEmailsInText(text: string): string {
  // Most lines hold no address at all: one scan for `@` instead of the look-behind regex's.
  return text.includes('@') ? text.replace(EMAIL_RE, maskEmail) : text;
}

// Field names whose values are contact addresses, masked wherever they appear in a log object.
// An `email` field may name something else (the e-mail provider): only addresses are masked.
const CONTACT_KEYS: Record<string, (v: string) => string> = {
  to: (v) => (v.includes('@') ? maskEmail(v) : maskPhone(v)),
  email: (v) => (v.includes('@') ? maskEmail(v) : v),
  emailId: maskEmail,
  mobileNumber: maskPhone,
  phone: maskPhone,
};

const isPlainObject = (value: object) => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * Censors secret fields and masks contact fields in plain objects and arrays, copying only what
 * changes. Class instances (errors, requests) are left to
 * their serializers: walking an IncomingMessage four levels deep on every request line cost more
 * than the rest of logging. One walk instead of pino's path-based `redact`, which parsed its paths
 * and cloned the object on every line (a fifth of a token request's logging CPU).
 */
function scrubLogFields(value: unknown, depth = 0): unknown {
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const masked = value.map((v) => scrubLogFields(v, depth + 1));
    return masked.some((v, i) => v !== value[i]) ? masked : value;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const mask = Object.hasOwn(CONTACT_KEYS, key) ? CONTACT_KEYS[key] : undefined;
    const masked =
      SECRET_KEYS.has(key) && v !== undefined ? CENSOR : mask && typeof v === 'string' ? mask(v) : scrubLogFields(v, depth + 1);
    if (masked !== v) {
      out ??= { ...(value as Record<string, unknown>) };
      out[key] = masked;
    }
  }
  return out ?? value;
}

/**
 * pino's error serializer, then the same censoring and masking on its own fields (an error's
 * `code`, a provider error's extra fields). Errors are instances, so the log-object walk leaves
 * them to this.
 */
export function serializeError(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error) as unknown;
  if (serialized === null || typeof serialized !== 'object') return serialized;
  return scrubLogFields({ ...serialized });
}

export interface LoggerOptions {
  level: string;
  name?: string;
  destination?: pino.DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      name: options.name,
      serializers: { err: serializeError },
      formatters: {
        log: (object) => scrubLogFields(object) as Record<string, unknown>,
      },
      hooks: {
        // The last word on every line, whatever produced its strings: messages, provider error
        // text, an error's message, cause and stack, fields no key-based rule knows about. Ids
        // holding a user id go first, while they are whole (an e-mail user id inside one would
        // otherwise be masked as an address with the id's prefix for its local part).
        streamWrite: (line) => maskContactsInText(maskUserIdsInIds(line)),
      },
    },
    // Asynchronous writes to stdout: lines logged while a write is under way go out together in
    // the next one, instead of one blocking write(2) per line on the request path. pino flushes
    // what is left when the process exits. If stdout stalls, at most 16 MiB wait; later lines are
    // dropped rather than growing the heap without bound.
    options.destination ?? pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024 }),
  );
}
