// What a failing browser test reports: for each open page a screenshot, its address and banner, and the last things
// it did (console lines, WebSocket frames sent and received, sockets opened and closed, page errors); the problems
// the test collected; and the warnings and errors each server logged last. A test written with `witness.test` adds
// all of it to its failure message, so a failure seen once (on a loaded machine, in CI) can be understood from its
// log alone.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

/** How many recent events a page keeps for the report (older ones are dropped). */
export const EVENTS_KEPT = 40;
/** How much of one frame or console line the report shows. */
const TEXT_KEPT = 240;

export class Witness {
  /**
   * `browser()` and `federation()` answer the current browser and federation (made in `before`); `runDir` holds the
   * servers' logs (<server>.log); `shots` is where screenshots go; `problems` is the test file's list of page
   * problems.
   */
  constructor({ browser, federation, runDir, shots, problems }) {
    this.browser = browser;
    this.federation = federation;
    this.runDir = runDir;
    this.shots = shots;
    this.problems = problems;
    this.events = new WeakMap();
    this.started = Date.now();
  }

  /** Keeps the last EVENTS_KEPT things `page` does, for the report. */
  watch(page, label) {
    const events = [];
    this.events.set(page, { label, events });
    const note = (what) => {
      events.push(`${((Date.now() - this.started) / 1000).toFixed(1)}s ${what}`.slice(0, TEXT_KEPT));
      if (events.length > EVENTS_KEPT) {
        events.shift();
      }
    };
    page.on('console', (message) => note(`console.${message.type()} ${message.text()}`));
    page.on('pageerror', (error) => note(`pageerror ${error.message}`));
    page.on('websocket', (ws) => {
      const url = ws.url();
      note(`ws open ${url}`);
      ws.on('framesent', (frame) => note(`ws > ${frame.payload}`));
      ws.on('framereceived', (frame) => note(`ws < ${frame.payload}`));
      ws.on('socketerror', (error) => note(`ws error ${url}: ${error}`));
      ws.on('close', () => note(`ws closed ${url}`));
    });
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) {
        note(`navigated to ${frame.url()}`);
      }
    });
  }

  /** `test(name, body)` whose failure message ends with the report. */
  test(name, body) {
    test(name, async () => {
      try {
        await body();
      } catch (e) {
        e.message += `\n${await this.report(name)}`;
        throw e;
      }
    });
  }

  async report(name) {
    const slug = name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40);
    const lines = [];
    let n = 0;
    for (const context of this.browser()?.contexts() ?? []) {
      for (const page of context.pages()) {
        const shot = join(this.shots, `failure-${slug}-${n++}.png`);
        await page.screenshot({ path: shot }).catch(() => {});
        const shown = await page.evaluate(() => ({
          banner: document.getElementById('banner')?.textContent,
          me: document.getElementById('me')?.textContent,
        })).catch(() => ({}));
        const { label = '?', events = [] } = this.events.get(page) ?? {};
        lines.push(`page ${label} ${page.url()} (${shot}): banner ${JSON.stringify(shown.banner)}, `
          + `me ${JSON.stringify(shown.me)}`);
        lines.push(...events.map((event) => `  ${event}`));
      }
    }
    lines.push(`page problems: ${JSON.stringify(this.problems)}`);
    const federation = this.federation();
    for (const server of federation ? federation.servers.keys() : []) {
      const log = join(this.runDir, `${server}.log`);
      const noted = existsSync(log)
        ? readFileSync(log, 'utf8').split('\n').filter((line) => / (WARN|ERROR) /.test(line)).slice(-5) : [];
      lines.push(`${server}: ${noted.length ? noted.join('\n  ') : 'no warning logged'}`);
    }
    return lines.join('\n');
  }
}
