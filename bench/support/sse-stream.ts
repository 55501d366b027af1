// A lean server-sent events reader for benchmarks that hold hundreds of streams open in one
// process: node:http (no fetch streams, no per-stream TextDecoderStream), one parser per stream,
// and the arrival time taken as the chunk holding the event is read.
import { Agent, request, type ClientRequest } from 'node:http';

export interface StreamEvent {
  id?: string;
  event?: string;
  data: string;
}

export interface OpenStream {
  status: number;
  close: () => void;
  /** Resolves when the server ends the stream (or the connection fails). */
  ended: Promise<void>;
}

/** One connection per stream, as separate browsers or phones would hold them. */
const streamAgent = new Agent({ keepAlive: false, maxSockets: Infinity });

function parseBlock(block: string): StreamEvent | undefined {
  const event: StreamEvent = { data: '' };
  let isEvent = false;
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === 0) continue; // a comment (keep-alive)
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') event.id = value;
    else if (field === 'event') event.event = value;
    else if (field === 'data') {
      event.data += value;
      isEvent = true;
    }
  }
  return isEvent ? event : undefined;
}

/**
 * Opens `url` as an event stream; `onEvent` gets each event with the `performance.now()` at which
 * its chunk was read. Resolves once the answer's head is in (status 200 or the refusal's).
 */
export function openStream(
  url: string,
  headers: Record<string, string>,
  onEvent: (event: StreamEvent, atMs: number) => void,
): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined = undefined;
    let endedResolve: () => void = () => undefined;
    const ended = new Promise<void>((r) => (endedResolve = r));
    req = request(url, { agent: streamAgent, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        const atMs = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = parseBlock(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event) onEvent(event, atMs);
        }
      });
      res.on('close', endedResolve);
      res.on('error', endedResolve);
      resolve({ status: res.statusCode ?? 0, close: () => req?.destroy(), ended });
    });
    req.on('error', (err) => {
      endedResolve();
      reject(err);
    });
    req.end();
  });
}
