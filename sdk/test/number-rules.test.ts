import { actionNeedsNumber } from '../src/index.js';

const actions = [
  { label: 'Approve', action: 'accept', authlevel: 1 },
  { label: 'Reject', action: 'reject', authlevel: 1 },
  { label: 'Report fraud', action: 'fraud', authlevel: 2 },
];

describe('which answers need the matching number', () => {
  test('when a notification has number matching, then only its first action (approving) needs the number', () => {
    const notification = { number_match: true, actions };
    expect(actions.map((a) => actionNeedsNumber(notification, a.action))).toEqual([true, false, false]);
  });

  test('when actions say requiresNumber, then that wins over the position', () => {
    const notification = {
      number_match: true,
      actions: [
        { ...actions[1], requiresNumber: false },
        { ...actions[0], requiresNumber: true },
      ] as unknown as typeof actions,
    };
    expect(actionNeedsNumber(notification, 'reject')).toBe(false);
    expect(actionNeedsNumber(notification, 'accept')).toBe(true);
  });

  test('when a notification has no number matching, or the action is unknown, then no number is needed', () => {
    expect(actionNeedsNumber({ number_match: false, actions }, 'accept')).toBe(false);
    expect(actionNeedsNumber({ actions }, 'accept')).toBe(false);
    expect(actionNeedsNumber({ number_match: true, actions }, 'other')).toBe(false);
  });
});
