import { createRequire } from 'node:module';
import type * as PhoneNumbers from 'libphonenumber-js/min';

// libphonenumber-js is loaded on first use, not when a module that may need it is imported: its
// numbering-plan metadata would otherwise be parsed and held by every process that reads the
// configuration, including workers that never see a number. A synchronous require keeps the
// request validators and the configuration check synchronous; every caller goes through here, so
// a process holds one copy of the metadata.
const require = createRequire(import.meta.url);
let loaded: typeof PhoneNumbers | undefined;

/** libphonenumber-js (its smallest metadata), loaded by the first call. */
export function phoneNumbers(): typeof PhoneNumbers {
  loaded ??= require('libphonenumber-js/min') as typeof PhoneNumbers;
  return loaded;
}
