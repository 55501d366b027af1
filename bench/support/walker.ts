// A browser stand-in for sign-in benchmarks: keeps cookies and follows redirects by hand until
// they leave the server under test (the client's redirect URI), so the code can be read there.

export class Walker {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}
  async go(url: string, form?: Record<string, string>): Promise<{ url: string; html: string } | { left: string }> {
    let current = url;
    let body = form ? new URLSearchParams(form).toString() : undefined;
    for (let hop = 0; hop < 10; hop++) {
      if (!current.startsWith(this.base)) return { left: current };
      const res = await fetch(current, {
        method: body === undefined ? 'GET' : 'POST',
        redirect: 'manual',
        headers: {
          cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(body !== undefined ? { body } : {}),
      });
      for (const line of res.headers.getSetCookie()) {
        const pair = line.split(';')[0] ?? '';
        const eq = pair.indexOf('=');
        if (eq > 0) this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.arrayBuffer();
        current = new URL(location, current).toString();
        body = undefined;
        continue;
      }
      const html = await res.text();
      if (res.status !== 200) throw new Error(`${current}: ${res.status} ${html.slice(0, 200)}`);
      return { url: current, html };
    }
    throw new Error('too many redirects');
  }
}
