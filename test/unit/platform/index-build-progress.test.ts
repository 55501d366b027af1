import { buildIn } from '../../../core/platform/db/index-build.js';

describe('an index build as currentOp shows it', () => {
  test('when MongoDB lists the build with a count, then its documents done and total are taken from the build operation', () => {
    const answer = {
      inprog: [
        { op: 'command', command: { createIndexes: 'users' } },
        {
          op: 'command',
          command: { createIndexes: 'users' },
          msg: 'Index Build: scanning collection Index Build: scanning collection: 1200/4800 25%',
          progress: { done: 1200, total: 4800 },
        },
      ],
      ok: 1,
    };
    expect(buildIn(answer)).toEqual({ done: 1200, total: 4800 });
  });

  test('when MongoDB lists the build without a count (it just started, or another answer shape), then it is running, with no guessed count', () => {
    expect(buildIn({ inprog: [{ op: 'command', progress: { done: '5' } }] })).toEqual({});
    expect(buildIn({ inprog: [null] })).toEqual({});
  });

  test('when MongoDB lists no operation, or the answer has no list, then the build is not seen', () => {
    expect(buildIn({ inprog: [] })).toBeUndefined();
    expect(buildIn({ ok: 1 })).toBeUndefined();
    expect(buildIn(undefined)).toBeUndefined();
  });
});
