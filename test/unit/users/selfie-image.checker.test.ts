import sharp from 'sharp';
import { checkSelfieImage } from '../../../core/users/selfie-image.checker.js';

/** The process's peak resident memory while `work` runs, above what it was before (MB). */
async function peakGrowthMb(work: () => Promise<unknown>): Promise<number> {
  const rss = () => process.memoryUsage.rss() / 1e6;
  const before = rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 2);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, rss()) - before;
}

/*
 * The selfie is checked in the API process while the request waits, so the check's memory is the
 * API's. A PNG of one colour compresses 29 megapixels (116 MB of pixels) into about 120 kB, well
 * within the body limit: the check must not hold the decoded pixels whole, or a few such requests
 * at once take more memory than the API has (384 MiB in deploy/kubernetes/web.yaml) and it is killed.
 */
describe('selfie image check: memory', () => {
  test('when four 29-megapixel PNGs of a few kB each are checked at once, then the process grows by far less than their pixels', async () => {
    const side = 5400;
    const png = await sharp({ create: { width: side, height: side, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 1 } } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    expect(png.length).toBeLessThan(200_000);
    const selfie = png.toString('base64');
    let checked: Awaited<ReturnType<typeof checkSelfieImage>>[] = [];
    const growth = await peakGrowthMb(async () => {
      checked = await Promise.all([1, 2, 3, 4].map(() => checkSelfieImage(selfie)));
    });
    expect(checked.map((c) => [c.format, c.width, c.height])).toEqual(Array(4).fill(['png', side, side]));
    // Four decodes held whole are 4 x 116 MB; read in a stream they are a few rows each.
    expect(growth).toBeLessThan(250);
  }, 60_000);

  test('when a selfie is truncated near its end, then it is still refused as not decoding completely', async () => {
    const noise = Buffer.alloc(600 * 400 * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    for (const format of ['jpeg', 'png'] as const) {
      const image = await sharp(noise, { raw: { width: 600, height: 400, channels: 3 } })
        .toFormat(format)
        .toBuffer();
      await expect(checkSelfieImage(image.toString('base64'))).resolves.toMatchObject({ format, width: 600, height: 400 });
      for (const kept of [0.5, 0.99]) {
        const cut = image.subarray(0, Math.floor(image.length * kept));
        await expect(checkSelfieImage(cut.toString('base64'))).rejects.toThrow('Failed.[IMAGE_DECODE_FAILED]');
      }
    }
  }, 60_000);
});
