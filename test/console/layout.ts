/** What the console suites check of the page's layout, in the browser: nothing cut off, nothing that reads `null`. */
import type { Page } from 'playwright-core';

/** A common laptop screen and a phone (an iPhone 14's CSS pixels). */
export const VIEWPORTS = {
  laptop: { width: 1366, height: 768 },
  phone: { width: 390, height: 844 },
} as const;

/**
 * What is wrong with the page as shown: a page or table that scrolls sideways (a column cut off
 * at the edge), a visible cell past the window's right edge, or a stray `null`, `undefined`,
 * `NaN` or `[object Object]` in the text. Empty when all is well.
 */
export function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(IN_PAGE) as Promise<string[]>;
}

/** Run in the page (as source text: these suites are compiled without the DOM's types). */
const IN_PAGE = `(() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width + 1) problems.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' px wide in ' + width);
  for (const box of document.querySelectorAll('.scroll')) {
    if (box.offsetParent !== null && box.scrollWidth > box.clientWidth + 1) {
      const table = box.querySelector('table');
      problems.push('table ' + (table?.id || table?.dataset.alias || '?') + ' is cut: ' + box.scrollWidth + ' px wide in ' + box.clientWidth);
    }
  }
  for (const cell of document.querySelectorAll('th, td')) {
    const r = cell.getBoundingClientRect();
    if (r.width > 0 && r.right > width + 1) problems.push('cell "' + cell.textContent.slice(0, 40) + '" ends at ' + Math.round(r.right) + ' px, past ' + width);
  }
  const text = document.body.innerText;
  for (const word of ['null', 'undefined', 'NaN', '[object Object]']) {
    const at = text.indexOf(word);
    if (at >= 0) problems.push('"' + word + '" shown: …' + text.slice(Math.max(0, at - 40), at + 40) + '…');
  }
  return problems;
})()`;

/** Resolves after the page has drawn its latest changes. */
export function painted(page: Page): Promise<unknown> {
  return page.evaluate('new Promise((resolve) => requestAnimationFrame(resolve))');
}
