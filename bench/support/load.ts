import autocannon from 'autocannon';

export interface LoadResult {
  requestsPerSecond: number;
  total: number;
  non2xx: number;
  errors: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
}

/** Closed-loop load with autocannon: `connections` clients, each sending as soon as answered. */
export async function autocannonPost(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  seconds: number,
  connections: number,
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    connections,
    pipelining: 1,
    duration: seconds,
  });
  const successes = result['2xx'];
  return {
    requestsPerSecond: successes / seconds,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
  };
}
