// A browser stand-in for sign-in benchmarks (scripts/support/page-walker.ts): the code is read
// where the walk leaves the server under test (the client's redirect URI); any page but a 200 stops the run.
import { PageWalker } from '../../scripts/support/page-walker.js';

export class Walker {
  private readonly pages: PageWalker;
  constructor(base: string) {
    this.pages = new PageWalker(base, 10);
  }

  async go(url: string, form?: Record<string, string>): Promise<{ url: string; html: string } | { left: string }> {
    const answer = await this.pages.visit(url, form);
    if ('leftTo' in answer) return { left: answer.leftTo };
    if (answer.status !== 200) throw new Error(`${answer.url}: ${answer.status} ${answer.html.slice(0, 200)}`);
    return { url: answer.url, html: answer.html };
  }
}
