/**
 * The live inbox in real Chromium, on the page's `SseClient` (shared-policy's, over `fetch` with
 * the session cookie): a mail appears without a reload; the Gateway restarts (every connection
 * drops), the page says "retrying", reconnects with `Last-Event-ID`, and a mail sent while it had
 * no stream arrives through the replay (SPEC G-22); then it is live again.
 */
import type { PersonEvent } from '@agentmail/protocol';
import type { AgentMailbox, Stack } from '@agentmail/testkit';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, startWebStack, UI_TIMEOUT_MS, type WebStack } from './support/browser.js';

const EVENTS_PATH = '/api/v1/me/events';

let ws: WebStack;
let stack: Stack;
let peer: AgentMailbox;

beforeAll(async () => {
  ws = await startWebStack({ agentName: 'pi', platform: 'pi' });
  stack = ws.stack;
  peer = await stack.addAgent('peer');
}, 120_000);

afterAll(async () => {
  await ws?.close();
});

/** A mail from the peer agent to the person; resolves with its event on the person's stream. */
async function mailFromPeer(subject: string): Promise<PersonEvent> {
  const sent = await peer.client.send({ to: stack.person.name, subject, body: `${subject}.` });
  if (sent.status !== 'sent') throw new Error(`not sent: ${JSON.stringify(sent)}`);
  return stack.person.events.waitFor(
    (e) => (e.type === 'new_mail' && e.data.mail_id === sent.mail_id ? e : undefined),
    UI_TIMEOUT_MS,
    `the event of "${subject}"`,
  );
}

/** The event id the page keeps as its cursor (what a reload resumes from). */
function pageCursor(page: Page): Promise<string | undefined> {
  return page.evaluate(() => {
    const raw = sessionStorage.getItem('agentmail.events.cursor');
    return raw === null ? undefined : (JSON.parse(raw) as { id?: string }).id;
  });
}

describe('the live inbox', () => {
  it('updates without a reload, and after a Gateway restart reconnects with Last-Event-ID: the mail sent meanwhile arrives', async () => {
    const streams: Request[] = [];
    const { page, problems } = await ws.open(stack.person.token, DESKTOP, {
      before: async (p) => {
        p.on('request', (r) => {
          if (new URL(r.url()).pathname === EVENTS_PATH) streams.push(r);
        });
      },
    });
    await page.locator('.live-live').waitFor();
    const before = await mailFromPeer('Before the restart');
    await page.getByText('Before the restart', { exact: true }).waitFor();
    expect(await pageCursor(page)).toBe(before.id);

    // Hold the page's next stream requests until a mail exists that it can only get by replay.
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    await page.route(`**${EVENTS_PATH}`, async (route) => {
      await gate;
      await route.continue();
    });
    const firstStreams = streams.length;
    await stack.restartGateway();
    await page.locator('.live-retrying').waitFor();
    const away = await mailFromPeer('While the page was away');
    open();

    await page.locator('.live-live').waitFor();
    const reconnects = streams.slice(firstStreams);
    expect(reconnects.length).toBeGreaterThan(0);
    // Every attempt after the drop resumed from the last event the page had, over the cookie.
    const headers = await Promise.all(reconnects.map((r) => r.allHeaders()));
    expect(headers.map((h) => h['last-event-id'])).toEqual(reconnects.map(() => before.id));
    expect(headers.every((h) => h.authorization === undefined)).toBe(true);
    // The mail itself came by the replay (the cursor moved to its event), not only by the reload.
    await page.getByText('While the page was away', { exact: true }).waitFor();
    await page.waitForFunction((id) => {
      const raw = sessionStorage.getItem('agentmail.events.cursor');
      return raw !== null && (JSON.parse(raw) as { id?: string }).id === id;
    }, away.id);

    await page.unroute(`**${EVENTS_PATH}`);
    const after = await mailFromPeer('After the restart');
    await page.getByText('After the restart', { exact: true }).waitFor();
    expect(await pageCursor(page)).toBe(after.id);
    expect(problems.errors).toEqual([]);
  });
});
