// Sends traced OTP requests at a fixed rate over keep-alive connections and records every answer.
import { Agent, request } from 'node:http';

export interface SentOtp {
  sentAt: number;
  answeredAt?: number;
  status?: number;
  otpUuid?: string;
  /** Transport failure or client timeout (no answer). */
  error?: string;
  userId: string;
  /** Carried in the message text, so the provider stub can tell which request a message is for. */
  trace: string;
}

/** What a caller gives up after, as a client would. */
const CLIENT_TIMEOUT_MS = 10_000;

export const DRILL_TEMPLATE = 'drill_sms';

export function startOtpLoad(options: {
  apiUrl: string;
  token: string;
  users: string[];
  ratePerSecond: number;
  seconds: number;
  tracePrefix: string;
}) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const sent: SentOtp[] = [];
  const pending = new Set<Promise<void>>();
  const started = Date.now();
  // Sending stops here; a drill moves it on so that load continues past a long fault.
  let endAt = started + options.seconds * 1000;

  const send = (userId: string, n: number) => {
    const record: SentOtp = { sentAt: Date.now(), userId, trace: `${options.tracePrefix}-${n}` };
    sent.push(record);
    const body = JSON.stringify({
      userId,
      dispatchOptions: { SMS: DRILL_TEMPLATE },
      dynamicMacros: { __TRACE__: record.trace },
      attempts: 3,
      expiresIn: 600,
    });
    const done = new Promise<void>((resolve) => {
      const req = request(
        `${options.apiUrl}/v1/svc-otp`,
        {
          method: 'POST',
          agent,
          timeout: CLIENT_TIMEOUT_MS,
          headers: {
            authorization: `Bearer ${options.token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => {
            record.answeredAt = Date.now();
            record.status = res.statusCode;
            if (res.statusCode === 200) record.otpUuid = (JSON.parse(text) as { otpUuid: string }).otpUuid;
            resolve();
          });
          res.on('error', () => resolve());
        },
      );
      req.on('timeout', () => req.destroy(new Error('client timeout')));
      req.on('error', (err: NodeJS.ErrnoException) => {
        record.answeredAt = Date.now();
        record.error = err.code ?? err.message;
        resolve();
      });
      req.end(body);
    });
    pending.add(done);
    void done.then(() => pending.delete(done));
  };

  const finished = new Promise<void>((resolve) => {
    let issued = 0;
    const timer = setInterval(() => {
      const total = Number.isFinite(endAt) ? Math.round(((endAt - started) / 1000) * options.ratePerSecond) : Infinity;
      const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * options.ratePerSecond));
      for (; issued < due; issued += 1) send(options.users[issued % options.users.length] as string, issued);
      if (issued >= total && Date.now() >= endAt) {
        clearInterval(timer);
        void Promise.all(pending).then(() => {
          agent.destroy();
          resolve();
        });
      }
    }, 5);
  });
  return {
    sent,
    finished,
    /** Moves the end of sending (epoch ms; Infinity keeps sending until moved again). */
    endAt: (at: number) => {
      endAt = at;
    },
  };
}
