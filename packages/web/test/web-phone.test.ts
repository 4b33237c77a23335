/**
 * The web mailbox on a phone (390 px, and 320 px for the tab bar) in real Chromium against a real
 * Gateway: a 1,000-mail thread with a 1 MB body opens at the clicked mail, folded; an approval
 * card in the inbox shows what it runs beside its buttons; toasts go by themselves and on another
 * page; failure mails and decided requests are marked as such; the inbox names each mail's
 * session; the tab bar and the admin key list fit; the first visit logs no console error.
 */
import { formatAddress } from '@agentmail/protocol';
import { buildApprovalRequest, buildFailureMail } from '@agentmail/shared-policy';
import { PersonApi } from '@agentmail/shared-policy/client';
import type { AgentMailbox, PersonClient, Stack } from '@agentmail/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOAST_MS } from '../src/bus.js';
import { PHONE, screenshot, startWebStack, type WebStack, watch } from './support/browser.js';

let ws: WebStack;
let stack: Stack;
let origin: string;
let tooly: AgentMailbox;

beforeAll(async () => {
  ws = await startWebStack();
  ({ stack, origin } = ws);
  tooly = await stack.addAgent('tooly');
}, 120_000);

afterAll(async () => {
  await ws?.close();
});

/** The phone's viewport height, in CSS px. */
const PHONE_HEIGHT = PHONE.viewport?.height ?? 844;

/** Run `fn` over `items`, `width` at a time (the seeding below: the Gateway takes them in parallel). */
async function inParallel<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/**
 * Words in `root` that the browser broke over two lines: a word's text box of more than one
 * rectangle (hidden text has none). The labels CSS draws before a card's cells are `nowrap`.
 */
function brokenWords(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).evaluate((root) => {
    const broken: string[] = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (const m of text.matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const rects = [...range.getClientRects()].filter((r) => r.width > 0);
        if (rects.length > 1) broken.push(m[0]);
      }
    }
    return broken;
  });
}

describe('a long thread (1,000 mails, one body of 1 MB) on a phone', () => {
  let dana: PersonClient;
  let clicked: string;
  const BIG_END = 'END-OF-THE-BIG-BODY';
  let seedMs = 0;

  beforeAll(async () => {
    dana = await stack.addPerson('dana');
    const chatty = await stack.addAgent('chatty');
    const big = `${Array.from({ length: 25_000 }, (_, i) => `Line ${i} of a very long log, kept whole.`)
      .join('\n')
      .slice(0, 1_000_000 - BIG_END.length - 1)}\n${BIG_END}`;
    expect(big.length).toBe(1_000_000);
    const started = Date.now();
    const ids: string[] = new Array(1000);
    // Relays to a person are free (no round budget, SPEC G-31), so one default session holds them all.
    await inParallel(
      Array.from({ length: 1000 }, (_, i) => i),
      8,
      async (i) => {
        const sent = await chatty.client.send({
          to: formatAddress({ name: dana.name, path: '', session: '' }),
          subject: `Progress ${i + 1}`,
          body: i === 989 ? big : `Step ${i + 1} done.`,
          relay: 'summary',
          relay_key: `long-thread:${i}`,
        });
        ids[i] = sent.mail_id;
      },
    );
    seedMs = Date.now() - started;
    clicked = ids[989] as string;
  }, 120_000);

  it('opens at the clicked mail, highlighted, older mails and the long body folded; "show all" unfolds it', async () => {
    // Sent in parallel, so the clicked mail's place in the thread is whatever the Gateway took it as.
    const window = await dana.api.thread(clicked, { limit: 100, around: clicked });
    const place = window.offset + window.mails.findIndex((m) => m.id === clicked);
    expect(place).toBeGreaterThan(900);
    const { page, problems } = await ws.open(dana.token, PHONE);
    await page.getByRole('link', { name: 'All', exact: true }).tap();
    await page.locator(`a[data-mail-id="${clicked}"]`).tap();
    const mail = page.locator(`article.mail[data-mail-id="${clicked}"]`);
    await mail.getByRole('button', { name: /^Show all/ }).waitFor({ timeout: 20_000 });
    const box = await mail.boundingBox();
    expect(box, 'the clicked mail is on the page').not.toBeNull();
    expect(box?.y ?? -1, 'the clicked mail starts in the viewport').toBeGreaterThanOrEqual(0);
    expect(box?.y ?? PHONE_HEIGHT, 'the clicked mail starts in the viewport').toBeLessThan(PHONE_HEIGHT / 2);
    expect(await mail.getAttribute('aria-current')).toBe('true');
    expect(await mail.evaluate((el) => getComputedStyle(el).outlineStyle), 'highlighted').toBe('solid');
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    expect(height, 'the page height is bounded: older mails and the long body are folded').toBeLessThan(
      6 * PHONE_HEIGHT,
    );
    expect(await mail.textContent()).not.toContain(BIG_END);
    // Folded: the 3 mails before it (one line each); whole: it and every mail after it.
    expect(await page.locator('article.mail.folded').count()).toBe(3);
    expect(await page.locator('article.mail:not(.folded)').count()).toBe(1000 - place);
    expect(await page.getByRole('button', { name: /^Show \d+ older mails$/ }).textContent()).toBe(
      `Show ${place - 3} older mails`, // the nearest 3 show folded (OLDER_SHOWN)
    );
    await screenshot(page, 'phone-long-thread');

    // "Show older" unfolds the rest of the page's older mails; "load earlier" fetches the page before.
    await page.getByRole('button', { name: /^Show \d+ older mails$/ }).tap();
    const inWindow = place - window.offset;
    expect(await page.locator('article.mail.folded').count()).toBe(inWindow);
    await page.getByRole('button', { name: `Load earlier mails (${window.offset} more)` }).tap();
    await expect
      .poll(() => page.locator('article.mail.folded').count())
      .toBe(inWindow + Math.min(100, window.offset));
    await mail.scrollIntoViewIfNeeded();

    // An older mail opens from its folded line; "show all" shows the whole body.
    await page
      .getByRole('button', { name: /^Open the mail of / })
      .last()
      .tap();
    await mail.getByRole('button', { name: /^Show all/ }).tap();
    await mail.getByText(BIG_END).waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeGreaterThan(50 * height);
    expect(problems.errors).toEqual([]);
    console.info(`long thread: 1,000 mails seeded in ${seedMs} ms`);
  }, 120_000);
});

describe('phone inbox: approvals, toasts, failure mails, sessions', () => {
  let sessionId: string;
  let askedAt = 0;

  /** A pending approval of `tooly` in the session of alice's mail, for `command`. */
  async function askApproval(command: string): Promise<string> {
    const r = await tooly.client.permissionRequest(
      buildApprovalRequest({
        agentName: tooly.name,
        toolName: 'bash',
        input: { command },
        sessionId,
        platformSessionId: 'ps-phone',
        toolCallId: `call-${++askedAt}`,
        cwd: stack.workdir,
      }),
    );
    if (r.status !== 'pending') throw new Error(`not asked: ${JSON.stringify(r)}`);
    return r.mail_id;
  }

  beforeAll(async () => {
    const task = await stack.person.send(formatAddress({ name: tooly.name, path: '', session: '' }), {
      subject: 'Clean the build',
      body: 'Please.',
    });
    sessionId = task.session_id;
  });

  it('an approval card shows what it runs beside "Approve once"; the toast goes by itself and on another page; a decided request reads as decided', async () => {
    const command = 'rm -rf build && make -j4 all';
    const firstMail = await askApproval(command);
    const { page, problems } = await ws.open(stack.person.token, PHONE);
    const card = page.locator('article.request', { hasText: command });
    const approve = card.getByRole('button', { name: 'Approve once' });
    await approve.waitFor();
    const shown = card.getByRole('figure', { name: 'What it runs' });
    expect(await shown.isVisible(), 'the command is shown, not folded away').toBe(true);
    expect(await shown.textContent()).toContain(command);
    const [commandBox, buttonBox] = [await shown.boundingBox(), await approve.boundingBox()];
    expect(commandBox && buttonBox, 'both on the page').toBeTruthy();
    expect(
      (commandBox?.y ?? 0) + (commandBox?.height ?? 0),
      'the command above the buttons',
    ).toBeLessThanOrEqual(buttonBox?.y ?? 0);
    expect(buttonBox?.y ?? 0, 'and both on one phone screen').toBeLessThan(PHONE_HEIGHT);
    await approve.tap();
    const toast = page.locator('.toast', { hasText: 'Approved once.' });
    await toast.waitFor();
    // Gone by itself: not a sleep, a wait on its removal, with room over its lifetime.
    await toast.waitFor({ state: 'detached', timeout: TOAST_MS + 3_000 });

    // Another decision's toast goes as soon as the person opens another page.
    const secondMail = await askApproval('git push --force');
    const deny = page.locator('article.request', { hasText: 'git push --force' }).getByRole('button', {
      name: 'Deny',
    });
    await deny.tap();
    const denied = page.locator('.toast', { hasText: 'Denied.' });
    await denied.waitFor();
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Agents' }).tap();
    await denied.waitFor({ state: 'detached', timeout: TOAST_MS / 2 });

    // In the inbox, the decided requests say how they were decided, each with its session.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: /Inbox/ }).tap();
    await page.getByRole('link', { name: 'All', exact: true }).tap();
    const first = page.locator(`a[data-mail-id="${firstMail}"]`);
    await first.locator('[data-request-state="approve_once"]').waitFor();
    expect(await first.locator('[data-request-state]').textContent()).toBe('approved once');
    expect(await page.locator(`a[data-mail-id="${secondMail}"] [data-request-state]`).textContent()).toBe(
      'denied',
    );
    expect(await first.locator('.session').textContent()).toBe('default session');
    expect(problems.errors).toEqual([]);
  });

  it('a failure mail is marked as a failure in the inbox and the thread; a normal reply is not; each row names its session', async () => {
    const task = await stack.person.send(
      formatAddress({ name: tooly.name, path: stack.workdir, session: 'new' }),
      { subject: 'Build the docs', body: 'Please.' },
    );
    const failure = await tooly.client.send(
      buildFailureMail({
        kind: 'all_models_failed',
        mail: { mail_id: task.mail_id, subject: 'Build the docs', from_name: stack.person.name },
        cause: 'HTTP 500: the model server broke',
        agentName: tooly.name,
      }),
    );
    const reply = await tooly.client.send({
      to: stack.person.name,
      subject: 'Re: Build the docs',
      body: 'Here is what I could do.',
      reply_to: task.mail_id,
      relay: 'summary',
      relay_key: `reply:${task.mail_id}`,
    });
    if (failure.status !== 'sent' || reply.status !== 'sent') throw new Error('not sent');
    const { page } = await ws.open(stack.person.token, PHONE);
    await page.getByRole('link', { name: 'All', exact: true }).tap();
    const failureRow = page.locator(`a[data-mail-id="${failure.mail_id}"]`);
    const replyRow = page.locator(`a[data-mail-id="${reply.mail_id}"]`);
    await failureRow.waitFor();
    expect(await failureRow.locator('.pill-failure').textContent()).toBe('failed');
    expect(await replyRow.locator('.pill-failure').count()).toBe(0);
    expect(await failureRow.locator('.session').textContent()).toBe(`Session ${failure.session_alias}`);
    expect(failure.session_alias).not.toBe('');
    await failureRow.tap();
    const mail = page.locator(`article.mail[data-mail-id="${failure.mail_id}"]`);
    await mail.waitFor();
    expect(await mail.locator('.pill-failure').textContent()).toBe('failed');
    expect(await mail.getByRole('note').textContent()).toContain('could not process');
  });
});

describe('phone layout', () => {
  it('the tab bar fits at 390 px with every label whole (and both counters), and at 320 px it fits or visibly scrolls', async () => {
    // The admin sees all five sections, with two-digit unread and a waiting request on the badges.
    const admin = new PersonApi({ baseUrl: origin, token: stack.adminToken });
    const started = await admin.send({
      to: formatAddress({ name: tooly.name, path: stack.workdir, session: 'new' }),
      subject: 'Tabs',
      body: 'x',
    });
    if (started.status !== 'sent') throw new Error('not sent');
    await tooly.client.permissionRequest(
      buildApprovalRequest({
        agentName: tooly.name,
        toolName: 'bash',
        input: { command: 'true' },
        sessionId: started.session_id,
        platformSessionId: 'ps-tabs',
        toolCallId: 'tabs',
      }),
    );
    await inParallel(
      Array.from({ length: 12 }, (_, i) => i),
      4,
      (i) =>
        tooly.client.send({
          to: 'admin',
          subject: `Unread ${i}`,
          body: 'x',
          relay: 'summary',
          relay_key: `tabs:${i}`,
        }),
    );
    const unread = (await admin.inbox({ status: 'unread', limit: 1 })).unread_count;
    const pending = (await admin.permissions('pending')).permissions.length;
    expect(unread, 'a two-digit counter').toBeGreaterThanOrEqual(10);
    expect(pending).toBeGreaterThanOrEqual(1);
    for (const width of [390, 320]) {
      const { page, problems } = await ws.open(stack.adminToken, {
        ...PHONE,
        viewport: { width, height: PHONE_HEIGHT },
      });
      const bar = page.getByRole('navigation', { name: 'Sections' });
      await bar.getByRole('link', { name: 'Admin' }).waitFor();
      await bar.getByText(String(unread), { exact: true }).waitFor({ timeout: 10_000 });
      const m = await bar.evaluate((nav) => ({
        scroll: nav.scrollWidth,
        client: nav.clientWidth,
        overflow: getComputedStyle(nav).overflowX,
        background: getComputedStyle(nav).backgroundImage,
        tabs: [...nav.querySelectorAll('a')].map((a) => ({
          label: a.textContent ?? '',
          whole: a.scrollWidth <= a.clientWidth,
          right: a.getBoundingClientRect().right,
        })),
      }));
      expect(
        m.tabs.map((t) => t.label),
        'every section',
      ).toEqual([`Inbox${unread}`, `Requests${pending}`, 'Write', 'Agents', 'Admin']);
      expect(
        m.tabs.filter((t) => !t.whole),
        'no label cut',
      ).toEqual([]);
      if (width === 390) {
        expect(m.scroll, 'the bar fits a 390 px phone').toBeLessThanOrEqual(m.client);
        expect(Math.max(...m.tabs.map((t) => t.right)), 'the last tab on screen').toBeLessThanOrEqual(width);
      } else if (m.scroll > m.client) {
        // Narrower: the bar scrolls, and a shadow at the edge shows there is more.
        expect(m.overflow).toBe('auto');
        expect(m.background).toContain('radial-gradient');
      }
      expect(problems.errors).toEqual([]);
    }
  });

  it('the admin key list is cards at 390 px: no word is broken over two lines', async () => {
    await stack.addAgent('agent-with-a-long-name');
    const { page } = await ws.open(stack.adminToken, PHONE, {});
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Admin' }).tap();
    const keys = page.getByRole('region', { name: 'Agent keys' });
    await keys.getByRole('button', { name: 'Revoke' }).first().waitFor();
    expect(
      await keys
        .locator('tbody tr')
        .first()
        .evaluate((tr) => getComputedStyle(tr).display),
    ).toBe('block');
    expect(await brokenWords(page, 'section[aria-labelledby="keys-h"]')).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });
});

describe('first visit', () => {
  it('the sign-in page logs no console error on the first load, nor after a sign-in and a reload', async () => {
    const context = await ws.browser.context(PHONE);
    const page = await context.newPage();
    const problems = watch(page, origin);
    await page.goto(`${origin}/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(problems.console, 'no console error on the first load').toEqual([]);
    await page.getByLabel('Your user token').fill(stack.person.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    await page.reload();
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    expect(problems.console, 'none signed in, after a reload either').toEqual([]);
    // A request a page sent just before the sign-out may still meet the ended session (a 401):
    // what counts is the next load of the sign-in page, which asks the Gateway nothing.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // Such a request may still be on its way when the sign-in page shows (a CI run saw its 401
    // land after this point): wait until the page has nothing left in flight.
    await page.waitForLoadState('networkidle');
    problems.console.length = 0;
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(problems.console, 'none on the sign-in page after a sign-out').toEqual([]);
    expect(problems.errors).toEqual([]);
  });
});
