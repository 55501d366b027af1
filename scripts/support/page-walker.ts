// A browser without JavaScript for the sign-in pages: keeps cookies and follows redirects by hand
// until one leaves the server it walks (the app's redirect URI), so the code can be read there.
// The fuzzing set-up (scripts/fuzz) and the sign-in benchmarks (bench/) both walk with it.

export interface WalkedPage {
  url: string;
  status: number;
  html: string;
}

export class PageWalker {
  private readonly cookies = new Map<string, string>();

  constructor(
    private readonly baseUrl: string,
    private readonly maxHops = 20,
  ) {}

  /** Follows redirects inside the server; the first one that leaves it is returned as is. */
  async visit(url: string, form?: Record<string, string>): Promise<WalkedPage | { leftTo: string }> {
    let current = url;
    let body = form ? new URLSearchParams(form).toString() : undefined;
    for (let hops = 0; hops < this.maxHops; hops += 1) {
      if (!current.startsWith(this.baseUrl)) return { leftTo: current };
      const res = await fetch(current, {
        method: body === undefined ? 'GET' : 'POST',
        redirect: 'manual',
        headers: {
          cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(body === undefined ? {} : { body }),
      });
      this.keepCookies(res);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        // Read to the end, so the connection goes back to the pool for the next hop.
        await res.arrayBuffer();
        current = new URL(location, current).toString();
        body = undefined;
        continue;
      }
      return { url: current, status: res.status, html: await res.text() };
    }
    throw new Error(`${url}: more than ${this.maxHops} redirects`);
  }

  private keepCookies(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? '';
      const eq = pair.indexOf('=');
      if (eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
}
