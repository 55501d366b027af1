import { ObjectId } from 'mongodb';
import { DuplicateKeysError, type DuplicateKeyGroup } from '../../../core/platform/db/unique-index-build.js';

/** The message an operator reads for one group of two documents sharing `key`, with `owner` on the first. */
function messageFor(key: unknown[], owner: DuplicateKeyGroup['documents'][number]): string {
  const fields = key.map((_, i) => `f${i}`);
  const group: DuplicateKeyGroup = { key, count: 2, documents: [owner, { _id: new ObjectId('a0a0a0a0a0a0a0a0a0a0a0a2') }] };
  return new DuplicateKeysError('users', 'f0_1', fields, [group], false).message;
}

const ID = new ObjectId('a0a0a0a0a0a0a0a0a0a0a0a1');

describe('the message naming stored documents that stop a unique index', () => {
  // Data written by hand or restored from elsewhere need not have the types the schema declares:
  // a key may hold a number, an array or a subdocument, and a number standing in JSON after `[`,
  // `:` or `,` is not one the text masking takes for a phone number.
  test('when key values hold phone numbers and e-mail addresses as strings, numbers, arrays or subdocuments, then none shows whole', () => {
    const message = messageFor(
      [
        15550209901,
        [15550209902, '+15550209903'],
        { mobile: 15550209904, emails: ['ann@example.com'], 'eve@example.com': true },
        [[15550209905]],
        'bob@example.com',
      ],
      { _id: ID, enterpriseId: 'cy@example.com', userId: 15550209906 },
    );
    for (const raw of ['5550209901', '5550209902', '5550209903', '5550209904', '5550209905', '5550209906'])
      expect(message).not.toContain(raw);
    for (const raw of ['ann@example.com', 'bob@example.com', 'cy@example.com', 'eve@example.com']) expect(message).not.toContain(raw);
    // Still readable: what was masked keeps its shape and last digits.
    expect(message).toContain('f0 "*********01"');
    expect(message).toContain('f4 "b***@example.com"');
    expect(message).toContain(`_id ${ID.toHexString()} (enterpriseId "c***@example.com", userId "*********06")`);
  });

  test('when a string _id is an address, then it is masked; an ObjectId shows whole', () => {
    const message = messageFor(['acme'], { _id: 'dee@example.com' });
    expect(message).toContain('_id "d***@example.com"');
    expect(message).toContain('_id a0a0a0a0a0a0a0a0a0a0a0a2');
  });

  // A user id or a template name is chosen by whoever created it; the operator reads this text on
  // a terminal. JSON quoting escapes C0 controls (a newline, ESC) but not C1 controls (U+009B is a
  // terminal's CSI, U+0085 a next-line), DEL, the line and paragraph separators or bidirectional
  // overrides, which reorder what the operator sees.
  test('when a stored value holds control characters, line separators or bidirectional overrides, then the message holds none of them and stays one line per group', () => {
    const hostile = 'x\n- enterpriseId "acme": 2 documents\u001b[2K\u009b2K\u0085\u2028\u2029\u202e\u2066\u007f\u200fend';
    const message = messageFor([hostile], { _id: ID, userId: hostile, enterpriseId: hostile });
    // eslint-disable-next-line no-control-regex
    expect(message).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(message.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(1);
    expect(message).toContain('\\u009b2K\\u0085\\u2028\\u2029\\u202e\\u2066\\u007f\\u200fend');
  });
});
