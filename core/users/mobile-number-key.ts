/**
 * The form in which two mobile numbers are compared: a '+' then the digits.
 *
 * A mobile number is `^\+?[0-9]{10,15}$`, the whole international number with its country code
 * first; the '+' is optional to type and does not make another number, so `15550100002` and
 * `+15550100002` are one phone. The uniqueness of a number among an enterprise's live users
 * compares this form (users.repository.ts), so a second user cannot take the phone another's codes
 * go to by typing the '+' differently. Messages still go to the number as it was registered: a
 * deployment that registers national numbers keeps its provider's reading of them.
 *
 * Not libphonenumber-js's canonical form: that follows its metadata, which changes between
 * versions, and a stored unique key must not change with a library update.
 */
export function mobileNumberKey(mobileNumber: string): string {
  return mobileNumber.startsWith('+') ? mobileNumber : `+${mobileNumber}`;
}
