// `kubectl phased-rollout dashboard` in a real browser: Debian's Chromium (hack/browser.sh), driven by
// playwright-core against the dashboard the plugin serves for a namespace of the e2e cluster. The page
// follows a rollout without a reload (the partition bar moves, boxes turn to the new revision), its
// Promote button continues a paused rollout through the same code path as the command, and actions
// without the token are refused. It leaves a screenshot of the rollout in progress in .e2e/.
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { shipped, start, type Child } from '../support/process.js';
import { createNamespace, deleteNamespace, env } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(180_000);

let ns: string;
let dash: Child;
let url: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ns = await createNamespace('e2e-dash');
  dash = start(shipped('plugin'), ['dashboard', '-n', ns, '--port', '0'], { KUBECONFIG: env().KUBECONFIG });
  url = await eventually(() => {
    const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(dash.stdout());
    expect(m).not.toBeNull();
    return m![0];
  }, 20_000, 100);
  browser = await chromium.launch({ executablePath: process.env.PHASED_ROLLOUT_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
});
afterAll(async () => {
  await browser?.close();
  dash?.proc.kill('SIGINT');
  await deleteNamespace(ns);
});

/**
 * what the page shows of one StatefulSet's card, read in the page (a string: the project's TypeScript
 * has no DOM types, and none are needed elsewhere)
 */
const CARD = `(id) => {
  const card = document.querySelector('.card[data-name="' + id + '"]');
  if (!card) return undefined;
  const pods = [...card.querySelectorAll('.pods .box')].map((b) => b.dataset.pod + ':' + b.dataset.on + (b.dataset.ready === 'true' ? '' : '!'));
  const order = [...card.querySelectorAll('.pods > span')].map((s) => (s.classList.contains('bar') ? '|' : s.textContent));
  return { phase: card.dataset.phase, partition: Number(card.dataset.partition), pods, order: order.join(' ') };
}`;
async function cardOf(name: string): Promise<{ phase: string; partition: number; pods: string[]; order: string } | undefined> {
  return page.evaluate(`(${CARD})(${JSON.stringify(`${ns}/${name}`)})`);
}

describe('kubectl phased-rollout dashboard', () => {
  it('follows a rollout live, promotes a paused one with its button, and leaves a screenshot', async () => {
    const sts = new Rollout(ns, 'web', 4, fastGate('web', { [KEYS.steps]: '1,pause,100%' }));
    await sts.create();
    await page.goto(url);
    await eventually(async () => expect(await cardOf('web')).toMatchObject({ partition: 4, order: '0 1 2 3 |' }), 20_000, 200);
    const loads = await page.evaluate<number>('performance.getEntriesByType("navigation").length');

    // A new image: the page shows the first pod on the new revision and the bar before it, then the pause.
    await sts.roll('registry.example/app:2');
    await eventually(async () => {
      const c = await cardOf('web');
      expect(c).toMatchObject({ phase: 'Paused', partition: 3, order: '0 1 2 | 3' });
      expect(c!.pods).toEqual(['web-0:current', 'web-1:current', 'web-2:current', 'web-3:update']);
    }, 60_000, 200);
    await page.click(`.card[data-name="${ns}/web"] summary`); // the checks and Events, for the picture
    await page.screenshot({ path: resolve(env().E2E_DIR, 'dashboard.png'), fullPage: true });

    // Promote, confirmed in the browser's dialog: the rollout continues to Completed, no reload.
    page.once('dialog', (d) => void d.accept());
    await page.click(`.card[data-name="${ns}/web"] button[data-verb="promote"]`);
    await eventually(async () => expect(await page.textContent('#notice')).toBe('statefulset.apps/web promoted'), 10_000, 100);
    await eventually(async () => {
      const c = await cardOf('web');
      expect(c).toMatchObject({ phase: 'Completed', partition: 4 });
      expect(c!.pods).toEqual(['web-0:update', 'web-1:update', 'web-2:update', 'web-3:update']);
    }, 60_000, 200);
    expect(await page.evaluate<number>('performance.getEntriesByType("navigation").length')).toBe(loads);
    expect(await page.getAttribute('#conn', 'data-state')).toBe('live');
  });

  it("shows the API server's refusal of an action as it came", async () => {
    // Promote when nothing waits for promotion: the plugin's own refusal, shown in the page.
    page.once('dialog', (d) => void d.accept());
    // The button is disabled outside a pause; enable it as a curious user could, to reach the server.
    // Enabled and clicked in one step: an update of the page in between would draw it disabled again.
    await page.evaluate(`(() => { const b = document.querySelector('.card[data-name="${ns}/web"] button[data-verb="promote"]'); b.disabled = false; b.click(); })()`);
    await eventually(async () => expect(await page.textContent('#notice')).toMatch(/^promote .*\/web refused \(409\): statefulset.apps\/web is not waiting for promotion \(phase Completed/), 10_000, 100);
  });

  it('refuses an action or the data without the token, and the page without it', async () => {
    const origin = new URL(url).origin;
    const body = JSON.stringify({ namespace: ns, name: 'web', verb: 'pause' });
    const noToken = await fetch(`${origin}/api/action`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    expect(noToken.status).toBe(403);
    const tokenInUrl = await fetch(`${origin}/api/action${new URL(url).search}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    expect(tokenInUrl.status).toBe(403);
    expect((await fetch(`${origin}/events`)).status).toBe(403);
    expect((await fetch(`${origin}/`)).status).toBe(403);
    // From another origin in the browser: the preflight is never answered, so the request never runs.
    const cross = await page.evaluate<number | string>(`fetch(${JSON.stringify(`http://localhost:${new URL(url).port}/api/action`)}, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Phased-Rollout-Token': 'guess' }, body: '{}' }).then((r) => r.status, (e) => String(e))`);
    expect(cross).not.toBe(200);
    // Nothing was paused by any of it.
    const s = await new Rollout(ns, 'web', 4).get();
    expect(s.metadata.annotations?.[KEYS.paused]).toBeUndefined();
  });
});
