import { createHash } from 'node:crypto';
import type sharpModule from 'sharp';
import { BadRequestError } from '../platform/errors/app-error.js';
import { loadOnFirstUse } from '../platform/load-on-first-use.js';

export const MAX_SELFIE_BYTES = 5 * 1024 * 1024;
// "At least 320x240" in either orientation: selfies are usually portrait.
const MIN_LONG_SIDE = 320;
const MIN_SHORT_SIDE = 240;

export type SelfieFailure = 'IMAGE_DECODE_FAILED' | 'UNSUPPORTED_FORMAT' | 'IMAGE_TOO_LARGE' | 'RESOLUTION_TOO_LOW';

export interface CheckedSelfie {
  bytes: Buffer;
  format: 'jpeg' | 'png';
  width: number;
  height: number;
  /** SHA-256 (hex) of the decoded bytes: `server_bio_template_hash`. */
  sha256: string;
}

/** 400 `Failed.[<CODE>]` (error label Bad Request). */
export const selfieFailure = (code: string) => new BadRequestError(`Failed.[${code}]`);

// No selfie needs more; the decode below reads the pixels as a stream, so this bounds its time.
const MAX_PIXELS = 30_000_000;
// What the full decode writes: every pixel is read and averaged into this, so a truncated or corrupt
// file still fails, but the decoded image is never held whole. Held whole (`raw().toBuffer()`), a
// one-colour PNG of 120 kB took 116 MB of the API's memory, and four such requests at once more
// than the API is given.
const DECODE_CHECK_SIDE = 16;

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

// libvips is loaded on the first selfie, not at start: it adds about 19 MB of resident memory to
// every process that imports this file, most of which never decode an image.
const loadSharp = loadOnFirstUse(() => import('sharp').then((m) => m.default));

/**
 * Decodes the Base64 selfie and checks it with libvips (sharp): size before decoding, format
 * from the file's own signature, and a full pixel decode so a truncated or corrupt file fails
 * here rather than at the analyzer. The decode streams (sequential read, every pixel averaged
 * into a tiny image; no shrink-on-load, which would let JPEG skip detail), so its memory is a
 * few rows whatever the image's size.
 */
export async function checkSelfieImage(base64: string): Promise<CheckedSelfie> {
  // Line breaks are common in Base64 from other systems (MIME wraps at 76 columns).
  const compact = base64.replace(/[\r\n]/g, '');
  if (compact.length === 0 || compact.length % 4 !== 0 || !BASE64_RE.test(compact)) throw selfieFailure('IMAGE_DECODE_FAILED');
  if ((compact.length / 4) * 3 - (compact.match(/=+$/)?.[0].length ?? 0) > MAX_SELFIE_BYTES) throw selfieFailure('IMAGE_TOO_LARGE');
  const bytes = Buffer.from(compact, 'base64');

  const sharp = await loadSharp();
  let metadata: sharpModule.Metadata;
  try {
    metadata = await sharp(bytes).metadata();
  } catch {
    throw selfieFailure('IMAGE_DECODE_FAILED');
  }
  if (metadata.format !== 'jpeg' && metadata.format !== 'png') throw selfieFailure('UNSUPPORTED_FORMAT');
  if ((metadata.width ?? 0) * (metadata.height ?? 0) > MAX_PIXELS) throw selfieFailure('IMAGE_TOO_LARGE');
  try {
    await sharp(bytes, { failOn: 'error', limitInputPixels: MAX_PIXELS, sequentialRead: true })
      .resize(DECODE_CHECK_SIDE, DECODE_CHECK_SIDE, { fit: 'fill', fastShrinkOnLoad: false })
      .raw()
      .toBuffer();
  } catch {
    throw selfieFailure('IMAGE_DECODE_FAILED');
  }
  const width = metadata.width ?? 0;
  const height = metadata.height ?? 0;
  if (Math.max(width, height) < MIN_LONG_SIDE || Math.min(width, height) < MIN_SHORT_SIDE) throw selfieFailure('RESOLUTION_TOO_LOW');
  return { bytes, format: metadata.format, width, height, sha256: createHash('sha256').update(bytes).digest('hex') };
}
