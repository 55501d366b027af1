import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attributeTail, overlapsAny, readJvmPauses, type TimedRequest } from '../../../bench/otp-e2e/tail-attribution.js';

describe('otp-e2e tail attribution', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tail-attribution-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('when the JVM logs its pauses, then each is read with the wall-clock start its end and length give', () => {
    const file = join(dir, 'mongo-gc.log');
    writeFileSync(
      file,
      [
        '[2026-11-29T12:53:36.787+0000] GC(0) Pause Young (Allocation Failure)',
        '[2026-11-29T12:53:36.812+0000] GC(0) Pause Young (Allocation Failure) 100M->8M(365M) 25.039ms',
        '[2026-11-29T13:53:48.207+0100] GC(1) Pause Full (System.gc()) 109M->13M(365M) 44.242ms',
        '[2026-11-29T12:53:49.000+0000] Using Serial',
      ].join('\n'),
    );
    const pauses = readJvmPauses(file);
    expect(pauses).toHaveLength(2);
    expect(pauses[0]).toEqual({ startMs: Date.parse('2026-11-29T12:53:36.812Z') - 25.039, durationMs: 25.039, kind: 'young' });
    expect(pauses[1].startMs).toBeCloseTo(Date.parse('2026-11-29T12:53:48.207Z') - 44.242, 3);
    expect(pauses[1].kind).toBe('full');
    expect(readJvmPauses(join(dir, 'absent.log'))).toEqual([]);
  });

  test('when a pause holds a run of requests, then the slowest overlap it and fall in one episode', () => {
    const at = 1_800_000_000_000;
    // 100 requests 10 ms apart taking 5 ms; the four due in the pause's 40 ms wait for its end.
    const pause = { startMs: at + 500, durationMs: 40, kind: 'young' };
    const requests: TimedRequest[] = Array.from({ length: 100 }, (_, i) => {
      const scheduledAt = at + i * 10;
      const held = scheduledAt >= pause.startMs && scheduledAt < pause.startMs + pause.durationMs;
      const arrivedAt = (held ? pause.startMs + pause.durationMs : scheduledAt) + 5;
      return { scheduledAt, answeredAt: arrivedAt - 2, arrivedAt };
    });
    const tail = attributeTail(requests, [], [], [pause], 0.04);
    expect(tail.slowest.requests).toBe(4);
    expect(tail.slowest.mongoServerPauseOverlapPercent).toBe(100);
    expect(tail.slowest.anyCollectionOverlapPercent).toBe(100);
    expect(tail.slowest.episodes).toBe(1);
    expect(tail.aroundMedian.mongoServerPauseOverlapPercent).toBe(0);
    expect(tail.events.mongoServer).toEqual({ pauses: 1, pauseMsMax: 40 });
  });

  test('when a request and a pause share any instant, then they overlap; touching ends do not', () => {
    const pause = { startMs: 100, durationMs: 40, kind: 'young' };
    expect(overlapsAny([pause], 90, 101)).toBe(true);
    expect(overlapsAny([pause], 139, 200)).toBe(true);
    expect(overlapsAny([pause], 110, 120)).toBe(true);
    expect(overlapsAny([pause], 50, 100)).toBe(false);
    expect(overlapsAny([pause], 140, 150)).toBe(false);
    expect(overlapsAny([], 0, 1000)).toBe(false);
  });
});
