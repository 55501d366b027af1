import { progressIn } from '../../../core/platform/db/index-build.js';

describe("an index build's progress read from currentOp", () => {
  test('when MongoDB reports the build, then its count of documents done and the total are taken from the build operation', () => {
    const answer = {
      inprog: [
        { op: 'command', command: { createIndexes: 'users' }, msg: undefined },
        {
          op: 'command',
          command: { createIndexes: 'users' },
          msg: 'Index Build: scanning collection Index Build: scanning collection: 1200/4800 25%',
          progress: { done: 1200, total: 4800 },
        },
      ],
      ok: 1,
    };
    expect(progressIn(answer)).toEqual({ done: 1200, total: 4800 });
  });

  test('when no operation carries a count (the build just started, or another answer shape), then there is no progress, not a guess', () => {
    expect(progressIn({ inprog: [{ op: 'command', progress: { done: '5' } }] })).toBeUndefined();
    expect(progressIn({ inprog: [] })).toBeUndefined();
    expect(progressIn({ ok: 1 })).toBeUndefined();
    expect(progressIn(undefined)).toBeUndefined();
  });
});
