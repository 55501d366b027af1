/**
 * Phone numbers and e-mail addresses written URL-encoded: `%2B15551234567`, `555%20123%204567`,
 * `jane.doe%40example.com`, or encoded twice (`%252B1555...`). A request path is decoded once before
 * it is logged, so an id its client encoded twice, or a path whose other escapes are malformed,
 * stays encoded in the line; form bodies (Twilio's `To=%2B1555...`) and Redis keys (a user's event
 * stream, `{default:%2B1555...}`) encode ids the same way. Each encoded token is decoded, masked as
 * plain text, and written back with its `+`, space and `@` encoded again (`%2B*********67`,
 * `j***%40example.com`); a token that holds nothing to mask is kept exactly as it was.
 */

// An escape that can be part of a number or an address: `+`, space, brackets, `-`, `.`, `@`, and
// `%` itself (an escape encoded twice).
const CONTACT_ESCAPE_RE = /%(?:2[05BbDdEe89]|40)/;
// A URL token (unreserved characters, sub-delimiters a number or an address may hold, escapes)
// holding such an escape. It starts only where a token starts, so each token is read once however
// long it is: a line costs time in proportion to its length.
const ENCODED_TOKEN_RE =
  /(?<![A-Za-z0-9._~!*'()+%-])(?:[A-Za-z0-9._~!*'()+-]|%[0-9A-Fa-f]{2})*%(?:2[05BbDdEe89]|40)(?:[A-Za-z0-9._~!*'()+-]|%[0-9A-Fa-f]{2})*/g;
const ESCAPED_PERCENT_RE = /%25(?=[0-9A-Fa-f]{2})/g;
const DECODED_ESCAPE_RE = /%(?:2[0BbDdEe89]|40)/g;
// Encoded twice at most is what a client's bug gives; more is not decoded (and not masked).
const PERCENT_DECODINGS = 2;
const REENCODED_RE = /[+ @]/g;
const REENCODED: Record<string, string> = { '+': '%2B', ' ': '%20', '@': '%40' };

function decodeContactEscapes(token: string): string {
  let text = token;
  for (let i = 0; i < PERCENT_DECODINGS && text.includes('%25'); i++) text = text.replace(ESCAPED_PERCENT_RE, '%');
  return text.replace(DECODED_ESCAPE_RE, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)));
}

/** Masks the URL-encoded numbers and addresses of `text` with `maskPlain`, the masking of plain text. */
export function maskUrlEncodedContacts(text: string, maskPlain: (text: string) => string): string {
  // Most lines hold no escape at all: one scan for `%` instead of the token expression's.
  if (!text.includes('%') || !CONTACT_ESCAPE_RE.test(text)) return text;
  return text.replace(ENCODED_TOKEN_RE, (token) => {
    const decoded = decodeContactEscapes(token);
    const masked = maskPlain(decoded);
    return masked === decoded ? token : masked.replace(REENCODED_RE, (char) => REENCODED[char] as string);
  });
}
