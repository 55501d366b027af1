import type { Locator, Page } from 'playwright-core';

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const overlaps = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** How a person would name a control in a report: its id, else its text. */
async function nameOf(control: Locator): Promise<string> {
  return (await control.getAttribute('id')) ?? (await control.innerText());
}

/**
 * The visible inputs and buttons that any of `covers` (status messages, say) is drawn over, found
 * with each control in turn scrolled to the top of the viewport: a message pinned to the screen
 * (fixed or sticky) covers whatever scrolls under it, in a real viewport and not only in a
 * full-page screenshot, while one in the flow covers nothing wherever the page is scrolled.
 */
export async function controlsCoveredBy(page: Page, covers: Locator): Promise<string[]> {
  const controls = await page.locator('input:visible, button:visible').all();
  const covered = new Set<string>();
  for (const scrolledTo of controls) {
    const top = (await scrolledTo.boundingBox())?.y;
    if (top === undefined) continue;
    await page.evaluate(`window.scrollBy(0, ${top})`);
    const coverBoxes = (await Promise.all((await covers.all()).map((cover) => cover.boundingBox()))).filter((box) => box !== null);
    for (const control of controls) {
      const box = await control.boundingBox();
      if (box && coverBoxes.some((cover) => overlaps(cover, box))) covered.add(await nameOf(control));
    }
  }
  await page.evaluate('window.scrollTo(0, 0)');
  return [...covered];
}

/** The empty space, in px, between the page's header and the first visible card under it. */
export async function gapBelowHeader(page: Page): Promise<number> {
  const header = await page.locator('header').boundingBox();
  const card = await page.locator('main > section:visible').first().boundingBox();
  if (!header || !card) throw new Error('no header or no visible card');
  return card.y - (header.y + header.height);
}

/** Whether all of `element` is on the screen, as the page is scrolled now. */
export async function isInViewport(page: Page, element: Locator): Promise<boolean> {
  const box = await element.boundingBox();
  const viewport = page.viewportSize();
  if (!box || !viewport) return false;
  return box.y >= 0 && box.x >= 0 && box.y + box.height <= viewport.height && box.x + box.width <= viewport.width;
}
