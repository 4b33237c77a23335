/**
 * The web mailbox with a real pi bridge (the `agentmail-pi` daemon, a pi worker per mail, the
 * scripted model) in real Chromium: a mail to `pi@<dir>.new` → the permission request appears
 * live → approve → the tool ran and the reply appears live in the thread; deny with a note; the
 * phone (390 px) approves from the inbox in one tap and answers pi's question (ask_person); a request whose turn was stopped is withdrawn
 * live, and answering it anyway says "no longer waiting". README screenshots come from here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { piAdapter, removeBundle } from '@agentmail/bridge-pi/harness';
import { formatAddress } from '@agentmail/protocol';
import { formatText } from '@agentmail/shared-policy';
import type { Stack } from '@agentmail/testkit';
import {
  CONFORMANCE_MODELS,
  marker,
  shellCall,
  TITLE_SCENARIO,
  toolResultsSeen,
  turnStart,
  unexpectedResult,
} from '@agentmail/testkit/conformance';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, PHONE, screenshot, startWebStack, type WebStack } from './support/browser.js';

let ws: WebStack;
let stack: Stack;
let origin: string;

beforeAll(async () => {
  ws = await startWebStack({
    agentName: 'pi',
    platform: 'pi',
    models: [CONFORMANCE_MODELS.working],
    scenarios: [TITLE_SCENARIO],
  });
  ({ stack, origin } = ws);
  await stack.startBridge(piAdapter);
}, 180_000);

afterAll(async () => {
  await ws?.close();
  await removeBundle();
});

/** Model steps for a task: run a shell command writing `file`, then answer `DONE <task>` once its output (or `deniedText`) is seen. */
function script(task: string, file: string, deniedText?: string): void {
  stack.model.addScenarios([
    {
      name: `${task}:shell`,
      match: turnStart(task),
      reply: shellCall(piAdapter, `echo RAN-${task} > ${file} && cat ${file}`),
    },
    {
      name: `${task}:answer`,
      match: { lastUserMessage: task, toolResultContains: deniedText ?? `RAN-${task}` },
      reply: { type: 'text', text: `${deniedText === undefined ? 'DONE' : 'NOTED'} ${task} 完成` },
    },
    unexpectedResult(task),
  ]);
}

function open(options = DESKTOP, before?: (page: Page) => Promise<unknown>) {
  return ws.open(stack.person.token, options, before ? { before } : {});
}

async function write(page: Page, subject: string, body: string): Promise<void> {
  await page.getByRole('link', { name: 'Write' }).click();
  await page
    .getByLabel('To', { exact: true })
    .fill(formatAddress({ name: 'pi', path: stack.workdir, session: 'new' }));
  await page.getByLabel('Subject').fill(subject);
  await page.getByLabel('Message').fill(body);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForURL(/#\/mail\//);
}

/** A mark in the page that a reload would wipe: set it, and check it is still there later. */
async function markNoReload(page: Page): Promise<() => Promise<boolean>> {
  await page.evaluate(() => {
    (window as { __noReload?: boolean }).__noReload = true;
  });
  return () => page.evaluate(() => (window as { __noReload?: boolean }).__noReload === true);
}

describe('web mailbox with the pi bridge', () => {
  it('a task to pi@<dir>.new: the request appears live in the thread, approve, the tool ran and the reply appears live', async () => {
    const task = marker('webapprove');
    const file = join(stack.workdir, `approved-${task}.txt`);
    script(task, file);
    const { page, problems } = await open();
    await write(page, `Fix the build ${task} 修复`, 'Run the command, please.');
    const stillSame = await markNoReload(page);

    const card = page.locator('article.request');
    await card.getByRole('button', { name: 'Approve once' }).waitFor();
    expect(await card.textContent(), 'the tool and its input are shown').toContain(`echo RAN-${task}`);
    expect(existsSync(file), 'the guarded tool waits for the approval').toBe(false);
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, 'desktop-approval');
    await card.getByRole('button', { name: 'Approve once' }).click();

    const reply = page.locator('article.mail', { hasText: `DONE ${task}` });
    await reply.waitFor();
    expect(await stillSame(), 'the request and the reply came without a reload').toBe(true);
    expect(readFileSync(file, 'utf8')).toContain(`RAN-${task}`);
    expect(toolResultsSeen(stack.model, task)).toContain(`RAN-${task}`);
    expect(await reply.locator('.pill-agent').count()).toBe(1);
    expect(await page.locator('article.request').count(), 'a decided request is no longer shown').toBe(0);
    await screenshot(page, 'desktop-thread');
    expect(problems.errors).toEqual([]);
  });

  it('deny with a note from the requests page: the tool does not run and the model sees the note', async () => {
    const task = marker('webdeny');
    const file = join(stack.workdir, `denied-${task}.txt`);
    const note = `Not on this machine, use a copy (${task})`;
    script(task, file, note);
    const { page } = await open();
    await write(page, `Clean up ${task}`, 'Run it.');
    await page.getByRole('link', { name: /Requests/ }).click();
    const card = page.locator('article.request', { hasText: task });
    await card.getByLabel('Note for the agent (optional)').fill(note);
    await card.getByRole('button', { name: 'Deny' }).click();
    await page.getByText('No agent is waiting for you.').waitFor();
    const decided = (await stack.person.permissions('all')).find((r) => r.context.includes(task));
    expect(decided).toMatchObject({ status: 'decided', decision: 'deny', note });
    await stack.awaitReply({ where: (m) => m.body.includes(`NOTED ${task}`), timeoutMs: 90_000 });
    expect(existsSync(file), 'a denied tool never runs').toBe(false);
    expect(toolResultsSeen(stack.model, task)).toContain(note);
  });

  it('on a phone (390 px): the request appears live in the inbox and is approved in one tap', async () => {
    const task = marker('webphone');
    const file = join(stack.workdir, `phone-${task}.txt`);
    script(task, file);
    const { page, problems } = await open(PHONE);
    await page.getByRole('link', { name: /Inbox/ }).click();
    await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `From the phone ${task}`,
      body: 'Run it.',
      permissionMode: 'workspace',
    });
    const approve = page
      .locator('article.request', { hasText: task })
      .getByRole('button', { name: 'Approve once' });
    await approve.waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, 'nothing wider than the phone').toBeLessThanOrEqual(390);
    const box = await approve.boundingBox();
    expect(box?.height ?? 0, 'a button big enough to tap').toBeGreaterThanOrEqual(40);
    await screenshot(page, 'phone-inbox');
    await approve.tap();
    await stack.awaitReply({ where: (m) => m.body.includes(`DONE ${task}`), timeoutMs: 90_000 });
    expect(readFileSync(file, 'utf8')).toContain(`RAN-${task}`);
    // Every page fits the phone.
    for (const tab of ['Requests', 'Write', 'Agents']) {
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('link', { name: new RegExp(tab) })
        .tap();
      await page.locator('main h1').first().waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth), tab).toBeLessThanOrEqual(390);
    }
    await page.getByRole('link', { name: 'Write', exact: true }).tap();
    await screenshot(page, 'phone-compose');
    expect(problems.errors).toEqual([]);
  });

  it('on a phone (390 px): pi asks a question (ask_person, P-10), the person picks an option in the inbox, pi gets the label', async () => {
    const task = marker('webask');
    stack.model.addScenarios([
      {
        name: `${task}:ask`,
        match: turnStart(task),
        reply: {
          type: 'tool_calls',
          calls: [
            {
              name: 'ask_person',
              arguments: { question: `Which release channel for ${task}?`, options: ['stable', 'beta'] },
            },
          ],
        },
      },
      {
        name: `${task}:answer`,
        match: { lastUserMessage: task, toolResultContains: 'beta' },
        reply: { type: 'text', text: `CHANNEL ${task} beta` },
      },
      unexpectedResult(task),
    ]);
    const { page, problems } = await open(PHONE);
    await page.getByRole('link', { name: /Inbox/ }).click();
    await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Release ${task}`,
      body: 'Ask me which channel.',
    });
    const card = page.locator('article.request', { hasText: `Which release channel for ${task}?` });
    await card.waitFor();
    expect(
      await card.getByRole('button', { name: 'Approve once' }).count(),
      'a question, not an approval',
    ).toBe(0);
    expect(await card.getByText('What it runs').count(), 'a question runs nothing').toBe(0);
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth),
      'nothing wider than the phone',
    ).toBeLessThanOrEqual(390);
    await card.getByLabel('beta').tap();
    const send = card.getByRole('button', { name: 'Send answer' });
    expect((await send.boundingBox())?.height ?? 0, 'a button big enough to tap').toBeGreaterThanOrEqual(40);
    await screenshot(page, 'phone-question');
    await send.tap();
    await stack.awaitReply({ where: (m) => m.body.includes(`CHANNEL ${task}`), timeoutMs: 90_000 });
    expect(toolResultsSeen(stack.model, task)).toContain(
      formatText('tools.ask_person.chose', { labels: 'beta' }),
    );
    expect(problems.errors).toEqual([]);
  });

  it('a request whose turn was stopped is withdrawn live; answering it anyway says "no longer waiting"', async () => {
    const task = marker('webstale');
    const file = join(stack.workdir, `stale-${task}.txt`);
    script(task, file);
    const { page: livePage } = await open();
    // A second tab that gets no live events (its stream is blocked): it still shows the request.
    const { page: stalePage } = await open(DESKTOP, (p) =>
      p.route('**/api/v1/me/events', (route) => route.abort()),
    );
    await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Stale ${task}`,
      body: 'Run it.',
      permissionMode: 'workspace',
    });
    const request = await stack.awaitPermission({
      timeoutMs: 90_000,
      where: (r) => r.context.includes(task),
    });
    await livePage.getByRole('link', { name: /Requests/ }).click();
    await livePage.locator(`article[data-request-id="${request.id}"]`).waitFor();
    await stalePage.goto(`${origin}/#/requests`);
    const staleCard = stalePage.locator(`article[data-request-id="${request.id}"]`);
    await staleCard.waitFor();

    await stack.stopBridge();
    // The bridge withdrew it on its way out: the live tab drops it without a reload.
    await livePage.locator(`article[data-request-id="${request.id}"]`).waitFor({ state: 'detached' });
    await livePage.getByText('A request is no longer waiting').waitFor();
    expect((await stack.person.permissions('all')).find((r) => r.id === request.id)?.status).toBe(
      'withdrawn',
    );

    await staleCard.getByRole('button', { name: 'Approve once' }).click();
    await staleCard.getByText(/No longer waiting/).waitFor();
    expect(existsSync(file), 'nothing ran').toBe(false);
    await stack.startBridge(piAdapter);
  });
});
