import { DependencyFailedError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import { selfieFailure, type CheckedSelfie } from './selfie-image.checker.js';

export interface FaceAnalyzerConfig {
  url: string;
  timeoutMs: number;
}

const REASON_RE = /^[A-Z0-9_]{1,64}$/;

/** The contract's 500 message, word for word; exposed because the message is part of the contract. */
export const analyzerFailure = (cause?: unknown) =>
  new DependencyFailedError('FACE_ANALYZER_FAILED', "Failed to consume aware server's analyze API.", { cause });

/**
 * Calls the external face analyzer (contract in docs/enrollment.md):
 * POST {url} `{"image": "<base64>", "format": "jpeg"|"png"}` → 200 `{"compliant": true}` or
 * `{"compliant": false, "reasons": ["FACE_TOO_FAR", ...]}`. A non-compliant answer is 400
 * `Failed.[<first reason>]`; anything else (status, shape, network, timeout) is that 500.
 */
export function createFaceAnalyzerClient(config: FaceAnalyzerConfig, logger: Logger) {
  return {
    async analyze(selfie: CheckedSelfie): Promise<void> {
      let answer: unknown;
      try {
        const res = await fetch(config.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ image: selfie.bytes.toString('base64'), format: selfie.format }),
          signal: AbortSignal.timeout(config.timeoutMs),
        });
        if (res.status !== 200) throw new Error(`analyzer answered ${res.status}`);
        answer = await res.json();
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'face analyzer call failed');
        throw analyzerFailure(err);
      }
      const { compliant, reasons } = (answer ?? {}) as { compliant?: unknown; reasons?: unknown };
      if (compliant === true) return;
      const first = Array.isArray(reasons) ? (reasons[0] as unknown) : undefined;
      if (compliant === false && typeof first === 'string' && REASON_RE.test(first)) throw selfieFailure(first);
      logger.warn('face analyzer answered an unexpected body');
      throw analyzerFailure();
    },
  };
}

export type FaceAnalyzer = ReturnType<typeof createFaceAnalyzerClient>;
