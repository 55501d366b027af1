/** One server-sent event as a client reads it. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads a text/event-stream answer as EventSource would (id, event, data lines; comments skipped)
 * and hands out the events in order.
 */
export async function openEventStream(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; next: (timeoutMs?: number) => Promise<SseEvent>; close: () => void }> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const queue: SseEvent[] = [];
  let wake: (() => void) | undefined;
  let failure: Error | undefined;
  if (res.ok && res.body) {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    void (async () => {
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event: SseEvent = { data: '' };
            let isEvent = false;
            for (const line of block.split('\n')) {
              const [field, ...rest] = line.split(':');
              const value = rest.join(':').replace(/^ /, '');
              if (field === 'id') event.id = value;
              else if (field === 'event') event.event = value;
              else if (field === 'data') {
                event.data += value;
                isEvent = true;
              }
            }
            if (isEvent) queue.push(event);
          }
          wake?.();
        }
      } catch (err) {
        failure = err as Error;
      }
      failure ??= new Error('stream ended');
      wake?.();
    })();
  }
  return {
    status: res.status,
    next: async (timeoutMs = 15000) => {
      const deadline = Date.now() + timeoutMs;
      while (queue.length === 0) {
        if (failure) throw failure;
        if (Date.now() > deadline) throw new Error(`no event within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(deadline - Date.now(), 0));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return queue.shift() as SseEvent;
    },
    close: () => abort.abort(),
  };
}
