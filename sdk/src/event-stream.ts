// Reads a text/event-stream body as EventSource does (id, event, data, retry; comments skipped).
// EventSource itself cannot send an Authorization header, so the library reads the stream with fetch.

export interface StreamEvent {
  id?: string;
  event: string;
  data: string;
}

/** Calls `onEvent` for each event of the body and `onRetry` for each `retry:` line, until it ends. */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: StreamEvent) => void,
  onRetry: (ms: number) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event: StreamEvent = { event: 'message', data: '' };
      let hasData = false;
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') event.id = text;
        else if (field === 'event') event.event = text;
        else if (field === 'retry' && /^[0-9]+$/.test(text)) onRetry(Number(text));
        else if (field === 'data') {
          event.data += hasData ? `\n${text}` : text;
          hasData = true;
        }
      }
      if (hasData) onEvent(event);
    }
  }
}
