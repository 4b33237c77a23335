/**
 * The web mailbox in real Chromium against a real Gateway (child process, SQLite file, SSE):
 * sign-in and sign-out, questions answered by option and by free text to a real kit bridge,
 * compose with address suggestions and an attachment round trip between two people, hostile mail
 * content rendered inert, the CSP, a cross-origin POST refused, and the agents and admin pages.
 * The pi bridge's own flow (approve, deny, phone, withdrawn) is in web-pi.test.ts.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { API_PREFIX, formatAddress } from '@agentmail/protocol';
import { type PersonClient, type Stack, scriptedKitBridge } from '@agentmail/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DESKTOP,
  screenshot,
  signIn,
  startWebStack,
  type TestBrowser,
  UI_TIMEOUT_MS,
  type WebStack,
  watch,
} from './support/browser.js';

let ws: WebStack;
let stack: Stack;
let browser: TestBrowser;
let origin: string;
let bob: PersonClient;
let asker: { close(): Promise<void> } | undefined;

/** A kit bridge whose host asks the person a question per mail (an options question when the subject says "pick", free text otherwise) and answers with what it got. */
async function startAsker(): Promise<{ close(): Promise<void> }> {
  const identity = await stack.addAgent('asker', 'opencode');
  return scriptedKitBridge({
    gatewayUrl: stack.gatewayUrl,
    agent: identity,
    platform: 'opencode',
    turn: async (ctx) => {
      const pick = ctx.mail.subject.includes('pick');
      const outcome = await ctx.turn.ask(
        pick
          ? [
              {
                question: 'Which colour should the button be?',
                options: [{ label: 'red' }, { label: 'green' }, { label: 'blue' }],
              },
            ]
          : [{ question: 'What should the project be called?' }],
      );
      return `ANSWERS ${JSON.stringify(outcome)}`;
    },
  });
}

beforeAll(async () => {
  ws = await startWebStack({ agentName: 'pi', platform: 'pi' });
  ({ stack, browser, origin } = ws);
  bob = await stack.addPerson('bob');
  asker = await startAsker();
}, 120_000);

afterAll(async () => {
  await asker?.close();
  await ws?.close();
});

function openPage(token = stack.person.token, options = DESKTOP, extra: { acceptDialogs?: boolean } = {}) {
  return ws.open(token, options, extra);
}

/** Files in the Gateway's blob directory. */
async function blobCount(dir: string): Promise<number> {
  return (await readdir(dir).catch(() => [])).length;
}

/** Write a mail through the compose page (the address typed in full). */
async function compose(page: Page, to: string, subject: string, body: string): Promise<void> {
  await page.getByRole('link', { name: 'Write' }).click();
  await page.getByLabel('To', { exact: true }).fill(to);
  await page.getByLabel('Subject').fill(subject);
  await page.getByLabel('Message').fill(body);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForURL(/#\/mail\//);
}

describe('sign in and out', () => {
  it('the session cookie is HttpOnly and SameSite=Strict; a wrong token, an agent key and sign-out say so on the page', async () => {
    const context = await browser.context();
    const page = await context.newPage();
    const problems = watch(page, origin);
    await page.goto(`${origin}/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Enter your user token');
    await page.getByLabel('Your user token').fill('amu_not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('unknown or was revoked');
    await page.getByLabel('Your user token').fill(stack.agent.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('This is an agent key');
    expect(await context.cookies(), 'no session for an agent key').toEqual([]);

    await signIn(page, origin, stack.person.token);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'am_session', httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(await page.evaluate(() => document.cookie), 'invisible to scripts').toBe('');
    const stored = await page.evaluate(() =>
      [localStorage, sessionStorage].flatMap((s) => Object.keys(s).map((k) => `${k}=${s.getItem(k)}`)),
    );
    expect(stored.join('\n'), 'no secret in web storage').not.toMatch(/amu_|am_session/);
    expect(await page.content(), 'the token is not kept in the page').not.toContain(stack.person.token);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    expect(await context.cookies()).toEqual([]);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(problems.errors).toEqual([]);
  });
});

describe('questions (SPEC P-9) to a real kit bridge', () => {
  it('answered by option: the question appears live in the thread, the answer reaches the agent and its reply appears live', async () => {
    const { page, problems } = await openPage();
    await compose(
      page,
      formatAddress({ name: 'asker', path: stack.workdir, session: 'new' }),
      'Please pick a colour',
      'Ask me.',
    );
    const card = page.locator('article.request');
    await card.getByText('Which colour should the button be?').waitFor();
    await card.getByLabel('green').check();
    await card.getByRole('button', { name: 'Send answer' }).click();
    await page.locator('article.mail', { hasText: 'ANSWERS' }).waitFor();
    const reply = await page.locator('article.mail', { hasText: 'ANSWERS' }).textContent();
    expect(reply).toContain('green');
    expect(reply).not.toContain('red');
    expect(
      (await stack.person.permissions('all')).find(
        (r) => r.kind === 'question' && r.answers.includes('green'),
      ),
    ).toMatchObject({
      status: 'decided',
      decision: 'answered',
    });
    expect(problems.errors).toEqual([]);
  });

  it('answered in free text (no options: a text box, never approve/deny)', async () => {
    const { page } = await openPage();
    await compose(
      page,
      formatAddress({ name: 'asker', path: stack.workdir, session: 'new' }),
      'A free question',
      'Ask me.',
    );
    const card = page.locator('article.request', { hasText: 'What should the project be called?' });
    await card.waitFor();
    expect(await card.getByRole('button', { name: 'Approve once' }).count()).toBe(0);
    await card.getByLabel('Your answer').fill('Lighthouse 灯塔');
    await card.getByRole('button', { name: 'Send answer' }).click();
    await page
      .locator('article.mail', { hasText: 'Lighthouse 灯塔' })
      .filter({ hasText: 'ANSWERS' })
      .waitFor();
  });
});

describe('compose', () => {
  it('address autocomplete from the suggest route, cc, and an attachment round trip between two people', async () => {
    const { page, problems } = await openPage();
    await page.getByRole('link', { name: 'Write' }).click();
    const to = page.getByLabel('To', { exact: true });
    await to.fill('p');
    await page.locator('.suggestions button[data-address="pi@."]').click();
    expect(await to.inputValue()).toBe('pi@.');
    await page.getByLabel('Cc').fill('bo');
    await page.locator('.suggestions button[data-address="bob@."]').click();
    expect(await page.getByLabel('Cc').inputValue()).toBe('bob@., ');
    await page.getByLabel('Subject').fill('Report 报告');
    await page.getByLabel('Message').fill('See the **attached** file.');
    const bytes = Buffer.from(`report ${'数据 '.repeat(2000)}\u0000\u00ff end`, 'utf8');
    await page
      .getByLabel('Attach files')
      .setInputFiles({ name: 'report 报告.bin', mimeType: 'application/octet-stream', buffer: bytes });
    await page.locator('.compose .attachments li').waitFor();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/#\/mail\//, { timeout: 15_000 }).catch(async (err: unknown) => {
      throw new Error(`not sent: ${await page.locator('.compose').textContent()}`, { cause: err });
    });

    // Bob, in his own browser session, sees it live in his inbox and downloads the file.
    const { page: bobPage } = await openPage(bob.token);
    await bobPage.getByRole('link', { name: /Report 报告/ }).click();
    const link = bobPage.getByRole('link', { name: /report 报告\.bin/ });
    const [download] = await Promise.all([bobPage.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('report 报告.bin');
    const saved = await readFile((await download.path()) as string);
    expect(createHash('sha256').update(saved).digest('hex')).toBe(
      createHash('sha256').update(bytes).digest('hex'),
    );
    expect(await bobPage.locator('article.mail dl.addresses').textContent()).toMatch(/alice@.*pi@/s);
    expect(problems.errors).toEqual([]);
  });

  it("regression: a mail into someone else's session keeps its mode; the page sends a mode only when the person chose one (P-1)", async () => {
    // bob starts a session in full mode; a mode on a send into it changes it (bob) or is refused (anyone else).
    const started = await bob.send(formatAddress({ name: 'pi', path: stack.workdir, session: 'new' }), {
      subject: 'full mode session',
      body: 'x',
      permissionMode: 'full',
    });
    const { page } = await openPage();
    await compose(page, started.address, 'joining in', 'the mode select left as it is');
    // Still full: bob's send without a mode answers the session's mode.
    const again = await fetch(`${origin}${API_PREFIX}/me/mail/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bob.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: started.address, subject: 'still?', body: '' }),
    });
    expect(((await again.json()) as { permission_mode?: string }).permission_mode).toBe('full');
    expect(await page.locator('select[name="mode"]').count()).toBe(0); // the page moved on to the mail
  });

  it("a bad address is named on the form, in the page's words, before anything is sent", async () => {
    const { page } = await openPage();
    await page.getByRole('link', { name: 'Write' }).click();
    await page.getByLabel('To', { exact: true }).fill('pi@relative/path.new');
    await page.getByLabel('Subject').fill('x');
    await page.getByRole('button', { name: 'Send' }).click();
    const alert = await page.getByRole('alert').first().textContent();
    expect(alert).toMatch(/^To: "pi@relative\/path\.new" is not an address/);
    expect(alert, String(alert)).not.toMatch(/\/api\/|HTTP|SPEC/);
    await page.getByLabel('To', { exact: true }).fill('nobody@.');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('nobody');
  });
});

describe('hostile mail content (SPEC H-1, H-4)', () => {
  let tracker: Server;
  let hits: string[];
  beforeAll(async () => {
    hits = [];
    tracker = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('x');
    });
    await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => tracker.close(() => resolve())));

  it('script, event handlers, javascript: links, frames and remote images render inert', async () => {
    const trackerUrl = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
    const mallory = await stack.addAgent('mallory');
    const body = [
      'Hello <script>window.__pwned = 1</script> there',
      '<img src="x" onerror="window.__pwned = 2">',
      '[click me](javascript:window.__pwned=3)',
      `![tracker](${trackerUrl}/pixel.png)`,
      '<a href="javascript:window.__pwned=4">raw link</a>',
      '<svg onload="window.__pwned = 5"></svg>',
      `<iframe src="${trackerUrl}/frame"></iframe>`,
      '<style>body { display: none }</style>',
      `[data](data:text/html,<script>alert(1)</script>)`,
      '[fine](https://example.com/ok) and **bold** 中文',
    ].join('\n\n');
    const sent = await mallory.client.send({
      to: 'alice@.',
      subject: '<b onmouseover="window.__pwned=6">Hi</b> 你好',
      body,
    });
    const { page, problems } = await openPage();
    await page.getByRole('link', { name: 'All', exact: true }).click();
    await page.locator(`a[data-mail-id="${sent.status === 'sent' ? sent.mail_id : ''}"]`).click();
    const mail = page.locator('article.mail').first();
    await mail.waitFor();
    const html = await mail.locator('.body').innerHTML();
    expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await mail.locator('.body script, .body img, .body iframe, .body svg, .body style').count()).toBe(
      0,
    );
    const handlers = await mail
      .locator('.body *')
      .evaluateAll((els) => els.flatMap((e) => e.getAttributeNames().filter((n) => n.startsWith('on'))));
    expect(handlers, 'no element carries an event handler').toEqual([]);
    expect(html).toContain('&lt;img src="x" onerror=');
    const hrefs = await mail
      .locator('.body a[href]')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    // The image became a link the person may open (nothing loaded it); the javascript: and data: links lost their target.
    expect(hrefs).toEqual([`${trackerUrl}/pixel.png`, 'https://example.com/ok']);
    expect(await mail.locator('.body a[href]').first().getAttribute('rel')).toContain('noopener');
    // What was sent is visible as text: the person sees the attempt, nothing runs.
    expect(await mail.locator('.body').textContent()).toContain('<script>window.__pwned = 1</script>');
    expect(await page.locator('h1').first().textContent()).toContain('<b onmouseover');
    await mail.getByRole('button', { name: 'Show as plain text' }).click();
    expect(await mail.locator('pre.body').textContent()).toBe(body);
    expect(hits, 'no request reached the remote server').toEqual([]);
    expect(problems.foreign).toEqual([]);
    expect(problems.dialogs).toEqual([]);
    await screenshot(page, 'hostile-mail-desktop');
  });

  it('the CSP blocks inline script; pages cannot be framed; security headers on every answer', async () => {
    const { page, problems } = await openPage();
    const res = await page.request.get(`${origin}/`);
    const csp = res.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers()['x-frame-options']).toBe('DENY');
    expect(res.headers()['x-content-type-options']).toBe('nosniff');
    expect(res.headers()['cache-control']).toBe('no-cache');
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inline = 1';
      document.body.append(s);
    });
    await expect.poll(() => problems.console.join('\n')).toMatch(/Content Security Policy/);
    expect(await page.evaluate(() => (window as { __inline?: unknown }).__inline)).toBeUndefined();
  });

  it('a cross-origin POST with the session cookie is refused (Origin check; SameSite alone lets another port through)', async () => {
    const { page } = await openPage();
    // Another origin on the same host: the same *site*, so the Strict cookie is sent.
    const evil = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>evil</title>');
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const evilOrigin = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
      await page.goto(evilOrigin);
      const blobs = () => blobCount(join(stack.rootDir, 'gateway-data', 'blobs'));
      const before = await blobs();
      const answers: number[] = [];
      page.on('response', (r) => {
        if (r.url().includes('/api/v1/me/attachments')) answers.push(r.status());
      });
      await page.evaluate(async (target) => {
        const form = new FormData();
        form.append('file', new Blob(['planted']), 'planted.txt');
        // A multipart POST is a "simple" request: no preflight, the browser sends it with cookies.
        // Its answer is unreadable here (and CORP makes the fetch reject): the test reads it from the network.
        await fetch(`${target}/api/v1/me/attachments`, {
          method: 'POST',
          mode: 'no-cors',
          credentials: 'include',
          body: form,
        }).catch(() => undefined);
      }, origin);
      expect(await blobs(), 'nothing was stored').toBe(before);
      expect(
        answers.filter((s) => s !== 403),
        'every answer a refusal',
      ).toEqual([]);
      // The same call from the mailbox's own origin goes through.
      await page.goto(`${origin}/`);
      const ok = await page.evaluate(async () => {
        const form = new FormData();
        form.append('file', new Blob(['mine']), 'mine.txt');
        return (await fetch('/api/v1/me/attachments', { method: 'POST', body: form })).status;
      });
      expect(ok).toBe(200);
      expect(await blobs()).toBe(before + 1);
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()));
    }
  });
});

describe('agents and admin pages', () => {
  it("agents show platform, presence and the person's sessions; admin adds a person, resets a token, issues and revokes a key", async () => {
    const { page, problems } = await openPage(stack.adminToken, DESKTOP, { acceptDialogs: true });
    await page.getByRole('link', { name: 'Agents' }).click();
    const askerCard = page.locator('article.agent[data-agent="asker"]');
    await askerCard.waitFor();
    expect(await askerCard.textContent()).toMatch(/opencode.*online/s);
    expect(await askerCard.textContent()).toContain('enforced by the bridge (native)');
    // The sandbox state its heartbeat said (SPEC P-12): a kit bridge without one says why.
    expect(await askerCard.textContent()).toContain(
      'Sandbox: unverified (opencode runs its tools in its own process: AgentMail does not wrap them)',
    );

    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByLabel("New person's name").fill('carol');
    await page.getByRole('button', { name: 'Add person' }).click();
    const people = page.getByRole('region', { name: 'People' });
    const token = await people.locator('[data-secret]').textContent();
    expect(token).toMatch(/^amu_/);
    await people.locator('li[data-user="carol"]').getByRole('button', { name: 'Reset token' }).click();
    await expect.poll(() => people.locator('[data-secret]').textContent()).not.toBe(token);
    const fresh = (await people.locator('[data-secret]').textContent()) ?? '';

    await page.getByLabel('Agent name for a new key').fill('robot');
    await page.getByRole('button', { name: 'Issue key' }).click();
    const keys = page.getByRole('region', { name: 'Agent keys' });
    await expect.poll(() => keys.locator('[data-secret]').textContent()).toMatch(/^amk_/);
    const row = keys.locator('tr', { hasText: 'robot' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByText(/revoked/).waitFor();
    expect(problems.errors).toEqual([]);

    // The reset token signs in; the old one no longer does.
    const { page: carol } = await openPage(fresh);
    expect(await carol.locator('.me').textContent()).toContain('carol');
    const context = await browser.context();
    const old = await context.newPage();
    await old.goto(`${origin}/`);
    await old.getByLabel('Your user token').fill(token ?? '');
    await old.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => old.getByRole('alert').textContent(), { timeout: UI_TIMEOUT_MS })
      .toContain('unknown or was revoked');
  });
});
