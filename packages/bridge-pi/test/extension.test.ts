/**
 * The standalone pi extension (a person's own pi, README section "pi extension") on the real
 * stack: the README's steps, as written: build the one-file extension
 * (`pnpm --filter @agentmail/bridge-pi build:extension`), then run pi's own CLI (the `pi` binary of
 * @earendil-works/pi-coding-agent, print mode) with `-e <that file>` and `AGENTMAIL_GATEWAY_URL` /
 * `AGENTMAIL_AGENT_KEY` against a real Gateway child process, the scripted model as pi's provider.
 * The model calls `read_inbox`, then `send_mail`: the mail reaches the person.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { formatText } from '@agentmail/shared-policy';
import type { Stack } from '@agentmail/testkit';
import { marker, startConformanceStack } from '@agentmail/testkit/conformance';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BRIDGE_ROOT } from '../harness/build.js';
import { EXTENSION_BUNDLE } from '../harness/extension.tsup.config.js';
import { piAdapter } from '../harness/pi-adapter.js';

const run = promisify(execFile);

/** Time pi's CLI may take for the whole exchange (loading pi is seconds on a loaded machine), in ms. */
const PI_RUN_MS = 120_000;

/** The `pi` binary of the pinned pi package (its `bin.pi`), run with this Node (>= 22.19). */
async function piCli(): Promise<string> {
  const root = join(BRIDGE_ROOT, 'node_modules', '@earendil-works', 'pi-coding-agent');
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { bin: { pi: string } };
  return join(root, pkg.bin.pi);
}

/**
 * README step 2: pi's own directory with the scripted model as an OpenAI-compatible provider, HOME
 * isolated; the environment and `pi -e <file>` (print mode, isolated from this machine's pi).
 */
async function runPi(
  stack: Stack,
  agent: { name: string; key: string },
  prompt: string,
  signal: AbortSignal,
): Promise<{ stdout: string; stderr: string }> {
  const home = join(stack.rootDir, `ext-home-${agent.name}`);
  const agentDir = join(home, 'pi-agent');
  await mkdir(agentDir, { recursive: true });
  await writeFile(
    join(agentDir, 'models.json'),
    JSON.stringify({
      providers: {
        [stack.modelProvider]: {
          baseUrl: stack.model.baseUrl,
          api: 'openai-completions',
          apiKey: 'test-key',
          models: stack.model.models.map((id) => ({ id })),
        },
      },
    }),
  );
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('PI_') && !key.startsWith('AGENTMAIL_')) env[key] = value;
  const started = performance.now();
  const piRun = run(
    process.execPath,
    [
      await piCli(),
      '-e',
      EXTENSION_BUNDLE,
      '-p',
      '--offline',
      '--no-session',
      '-ne',
      '-nc',
      '--provider',
      stack.modelProvider,
      '--model',
      stack.model.models[0] ?? '',
      `Check your mail and answer it. ${prompt}`,
    ],
    {
      cwd: stack.workdir,
      signal,
      timeout: PI_RUN_MS,
      env: {
        ...env,
        HOME: home,
        TMPDIR: home,
        PI_CODING_AGENT_DIR: agentDir,
        AGENTMAIL_GATEWAY_URL: stack.gatewayUrl,
        AGENTMAIL_AGENT_KEY: agent.key,
        AGENTMAIL_AGENT_NAME: agent.name,
      },
    },
  );
  piRun.child.stdin?.end(); // nothing piped in: pi must not wait for stdin
  const pi = await piRun;
  console.info(
    `bridge-pi extension: pi -p with the extension ran in ${Math.round(performance.now() - started)} ms`,
  );
  return pi;
}

describe('bridge-pi extension in a person’s own pi (pi -e)', () => {
  it('pi’s CLI with the bundled extension reads the inbox and sends a mail that reaches the person', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());

    // README step 1: build the extension file.
    await run('pnpm', ['--filter', '@agentmail/bridge-pi', 'build:extension'], {
      cwd: BRIDGE_ROOT,
      signal,
    });

    const task = marker('ext-task');
    const done = marker('ext-done');
    const sent = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Please answer ${task}`,
      body: 'From your own pi, please.',
    });
    const replyLabel = formatText('tools.label.reply_address', {}, 'en');
    const prompt = marker('check-mail');
    stack.model.addScenarios([
      {
        name: 'ext:final',
        match: {
          lastUserMessage: prompt,
          predicate: (r) => r.toolResults.some((t) => t.toolCallId === 'send_1'),
        },
        reply: { type: 'text', text: `Sent ${done}.` },
      },
      {
        name: 'ext:read_inbox',
        match: { lastUserMessage: prompt, hasToolResult: false, toolOffered: 'read_inbox' },
        reply: { type: 'tool_calls', calls: [{ name: 'read_inbox', arguments: {}, id: 'inbox_1' }] },
      },
      {
        name: 'ext:send_mail',
        match: { lastUserMessage: prompt, toolResultContains: task },
        reply: (request) => {
          const inbox = request.toolResults.map((t) => t.text).join('\n');
          const to = new RegExp(`${replyLabel}: (\\S+)`).exec(inbox)?.[1] ?? `no "${replyLabel}" line`;
          return {
            type: 'tool_calls',
            calls: [
              {
                name: 'send_mail',
                id: 'send_1',
                arguments: { to, subject: `Re: ${task}`, body: `Answered ${done}`, reply_to: sent.mail_id },
              },
            ],
          };
        },
      },
    ]);

    const pi = await runPi(stack, { name: stack.agent.name, key: stack.agent.key }, prompt, signal);
    expect(pi.stdout, `pi's answer (stderr: ${pi.stderr})`).toContain(`Sent ${done}.`);

    const mail = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name });
    expect(mail).toMatchObject({ subject: `Re: ${task}`, from_human: false, relay: false });
    expect(mail.body).toContain(`Answered ${done}`);
    expect(
      stack.model.requests({ match: { lastUserMessage: prompt } }).map((r) => r.scenario),
      'the extension’s tools ran in pi: inbox read, mail sent, then the answer',
    ).toEqual(['ext:read_inbox', 'ext:send_mail', 'ext:final']);
  }, 240_000);

  it('regression: an agent name no daemon registered works: the extension registers it (idempotent)', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    await run('pnpm', ['--filter', '@agentmail/bridge-pi', 'build:extension'], { cwd: BRIDGE_ROOT, signal });
    // A key for "mypi", and nothing else: no daemon ever registered the name.
    const issued = await fetch(`${stack.gatewayUrl}/api/v1/admin/agent-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_name: 'mypi' }),
    });
    const { key } = (await issued.json()) as { key: string };
    const prompt = marker('mypi');
    const done = marker('mypi-done');
    stack.model.addScenarios([
      {
        name: 'mypi:final',
        match: {
          lastUserMessage: prompt,
          predicate: (r) => r.toolResults.some((t) => t.toolCallId === 'inbox_1'),
        },
        reply: { type: 'text', text: `Checked ${done}.` },
      },
      {
        name: 'mypi:read_inbox',
        match: { lastUserMessage: prompt, hasToolResult: false, toolOffered: 'read_inbox' },
        reply: { type: 'tool_calls', calls: [{ name: 'read_inbox', arguments: {}, id: 'inbox_1' }] },
      },
    ]);
    const pi = await runPi(stack, { name: 'mypi', key }, prompt, signal);
    expect(pi.stdout, `pi's answer (stderr: ${pi.stderr})`).toContain(`Checked ${done}.`);
    const inboxRun = stack.model.requests({ match: { lastUserMessage: prompt } });
    const toolText = inboxRun.flatMap((r) => r.toolResults.map((t) => t.text)).join('\n');
    expect(toolText).not.toContain('not registered');
    // The Gateway knows the agent now: people can write to it.
    const contacts = await fetch(`${stack.gatewayUrl}/api/v1/me/contacts`, {
      headers: { authorization: `Bearer ${stack.adminToken}` },
    });
    expect(
      ((await contacts.json()) as { contacts: { name: string }[] }).contacts.map((c) => c.name),
    ).toContain('mypi');
  }, 240_000);
});
