/** Types of the OTP core, mirroring schemas/http/otp.generate.json and otp.segment.json. */

export const CHAR_SET_IDS = ['N', 'L', 'U', 'M', 'S'] as const;
export type CharSetId = (typeof CHAR_SET_IDS)[number];

export const HASH_SPECS = ['PLAIN', 'SHA_256', 'SHA_384', 'SHA_512', 'SHA_HEX_256', 'SHA_HEX_384', 'SHA_HEX_512'] as const;
export type HashSpec = (typeof HASH_SPECS)[number];

export const OTP_CHANNELS = ['SMS', 'EMAIL'] as const;
export type OtpChannel = (typeof OTP_CHANNELS)[number];

/** One segment as sent by the caller (element of `otpSpecs`). */
export interface OtpSegmentBody {
  length: number;
  charSets: string;
  minLowercase?: number;
  minUppercase?: number;
  minNumeric?: number;
  minSpecial?: number;
  exclude?: string[];
}

/** The Generate OTP body once it has passed the JSON Schema. */
export interface GenerateOtpBody {
  userId: string;
  otpSpecs?: OtpSegmentBody[];
  otpSpec?: string;
  dispatchOptions: Partial<Record<OtpChannel, string>>;
  fallbackDispatchOptions?: Partial<Record<OtpChannel, string>>;
  dynamicMacros: Record<string, string>;
  attempts: number;
  expiresIn: number;
  hashSpec?: HashSpec;
  msgId?: string;
  generateJwt?: boolean;
}

/**
 * A segment ready for the generator. Minimums of sets absent from `charSets` are already 0
 * (they are ignored), so consumers never re-derive which minimum applies.
 */
export interface NormalizedSegment {
  readonly length: number;
  /** Distinct identifiers in the order the caller wrote them. */
  readonly charSets: readonly CharSetId[];
  readonly minLowercase: number;
  readonly minUppercase: number;
  readonly minNumeric: number;
  readonly minSpecial: number;
  /** Distinct excluded characters, in first-seen order. */
  readonly exclude: readonly string[];
}

/** The validated, defaulted Generate OTP request handed to the OTP service. */
export interface GenerateOtpRequest {
  readonly userId: string;
  readonly segments: readonly NormalizedSegment[];
  readonly channels: Readonly<Partial<Record<OtpChannel, string>>>;
  /** The channel a failed message falls back to, and its template (`fallbackDispatchOptions`). */
  readonly fallback?: Readonly<{ channel: OtpChannel; template: string }>;
  readonly dynamicMacros: Readonly<Record<string, string>>;
  readonly attempts: number;
  readonly expiresIn: number;
  readonly hashSpec: HashSpec;
  readonly msgId?: string;
  readonly generateJwt: boolean;
}
