import { jest } from '@jest/globals';
import type { ActivityRepository } from '../../core/activity/activity.repository.js';

/**
 * The activity record refuses every write about this user, as a MongoDB stepping down would,
 * until the returned function is called; entries about others are written as usual.
 */
export function recordRefusesWritesAbout(activity: ActivityRepository, userId: string): () => void {
  const { append, appendOnce } = activity;
  const down = () => Promise.reject(new Error('MongoDB stepped down'));
  const appendSpy = jest
    .spyOn(activity, 'append')
    .mockImplementation((entry, at) => (entry.userId === userId ? down() : append(entry, at)));
  const onceSpy = jest
    .spyOn(activity, 'appendOnce')
    .mockImplementation((id, entry, at) => (entry.userId === userId ? down() : appendOnce(id, entry, at)));
  return () => {
    appendSpy.mockRestore();
    onceSpy.mockRestore();
  };
}
