/** How many finished jobs every queue keeps for the dashboard and debugging (bounded Redis use). */
export const JOB_RETENTION = {
  removeOnComplete: { count: 1000, age: 24 * 3600 },
  removeOnFail: { count: 5000, age: 7 * 24 * 3600 },
} as const;
