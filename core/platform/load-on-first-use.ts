/**
 * Memoizes a costly load that few requests need, such as a heavy library behind
 * `() => import('x')`: nothing is loaded until the first call, and from then on every caller gets
 * the same promise. A load that fails is forgotten once it has failed (callers already waiting
 * on it see the error), so a passing fault is tried again on the next call instead of being
 * answered to every caller until the process restarts.
 */
export function loadOnFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    if (loading) return loading;
    const attempt = load();
    loading = attempt;
    // Only this attempt is dropped: a newer one may have replaced it by the time it fails.
    attempt.catch(() => {
      if (loading === attempt) loading = undefined;
    });
    return attempt;
  };
}
