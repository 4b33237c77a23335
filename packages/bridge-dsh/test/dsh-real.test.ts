/**
 * DSH-specific behaviour against the real dsh (beyond the conformance suite): the user's install
 * route (`dsh plugin add` of the bundle package into a fresh profile), a person's own web session
 * keeping DSH's own approval prompt, and DSH's own asks in a mail turn (a sandbox escalation)
 * answered by mail before the web host's greedy answerer.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { HostHarness, Scenario, Stack } from '@agentmail/testkit';
import {
  CONFORMANCE_SCENARIOS,
  guardedToolRunsAfterApproval,
  marker,
  runConformanceScenario,
  startConformanceStack,
  toolResultsSeen,
  turnStart,
} from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it } from 'vitest';
import { removeSharedBundle, sharedBundle } from '../harness/build.js';
import { createDshAdapter } from '../harness/dsh-adapter.js';
import { dshBin } from '../harness/dsh-bin.js';
import { createDshSandbox } from '../harness/sandbox.js';
import { WebPerson, webUrl } from '../harness/web-person.js';

const run = promisify(execFile);
const STEP_MS = 45_000;

afterAll(removeSharedBundle);

async function withStack(
  adapter: HostHarness,
  signal: AbortSignal,
  body: (stack: Stack) => Promise<void>,
): Promise<void> {
  const stack = await startConformanceStack(adapter, { signal });
  try {
    await body(stack);
  } finally {
    await stack.close();
  }
}

/** The model asks for a sandbox escalation (dsh's own ask), then reports the tool results it saw. */
function escalation(mark: string): Scenario[] {
  return [
    {
      name: `${mark}:escalate`,
      match: turnStart(mark),
      reply: {
        type: 'tool_calls',
        calls: [
          {
            name: 'bash',
            arguments: {
              command: `echo ESC-${mark}`,
              description: 'escalate',
              sandbox_permissions: 'danger-full-access',
              justification: 'the test needs it',
            },
          },
        ],
      },
    },
    {
      name: `${mark}:after`,
      match: { lastUserMessage: mark, hasToolResult: true },
      reply: (r) => ({
        type: 'text',
        text: `AFTER ${mark}: ${r.toolResults.map((t) => t.text).join(' | ')}`,
      }),
    },
  ];
}

describe('bridge-dsh on the real dsh', () => {
  it.each([
    [{ gatewayUrl: 'localhost:8787', agentKey: 'k' }, 'AGENTMAIL_GATEWAY_URL must be an http(s) URL'],
    [
      { gatewayUrl: 'http://127.0.0.1:9' },
      'AGENTMAIL_AGENT_KEY is not set: create one with `agentmail agent key dsh`',
    ],
    [
      { gatewayUrl: 'http://127.0.0.1:9', agentKey: 'k', concurrency: true },
      '$.concurrency expected string | number',
    ],
    [
      { gatewayUrl: 'http://127.0.0.1:9', agentKey: 'k', turnTimeoutMs: 'soon' },
      'AGENTMAIL_TURN_TIMEOUT_MS must be an integer >= 1',
    ],
  ])(
    'a bad setting in the row config stops dsh at boot with a message naming it (%#)',
    async (config, named) => {
      const bundle = await sharedBundle();
      const root = await mkdtemp(join(tmpdir(), 'bridge-dsh-config-'));
      try {
        const sandbox = createDshSandbox({
          root,
          profile: 'base',
          modelBaseUrl: 'http://127.0.0.1:9/v1',
          modelIds: ['m'],
        });
        await writeFile(
          sandbox.overlay,
          `- insert:\n    - ${JSON.stringify({ id: 'agentmail', name: bundle.pluginJs, config })}\n`,
        );
        const env = { PATH: process.env.PATH ?? '', ...sandbox.env };
        const failed = await run(
          process.execPath,
          [dshBin(), '--profile', sandbox.profile, '--patch', sandbox.overlay],
          {
            env,
            cwd: root,
            timeout: 60_000,
          },
        ).then(
          () => undefined,
          (err: { code?: number; stderr?: string }) => err,
        );
        expect(failed?.code, 'dsh exits non-zero').toBe(1);
        expect(failed?.stderr).toContain(named);
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  );

  it('installed as DSH users install plugins — `dsh plugin add` of the bundle into a fresh profile — it connects and answers mail', async ({
    signal,
  }) => {
    const base = createDshAdapter();
    let profileManifest: unknown;
    const installed: HostHarness = {
      ...base,
      async start(env) {
        const bundle = await sharedBundle();
        const sandbox = createDshSandbox({
          root: join(env.stateDir, 'dsh'),
          profile: 'base',
          profileName: 'fresh',
          modelBaseUrl: env.modelBaseUrl,
          modelIds: env.modelIds,
        });
        const dshEnv = { ...env.processEnv, ...sandbox.env };
        await run(process.execPath, [dshBin(), 'plugin', '--profile', 'fresh', 'add', bundle.dir], {
          env: dshEnv,
          cwd: env.workdir,
        });
        profileManifest = JSON.parse(
          await readFile(join(sandbox.home, 'profiles', 'fresh', 'package.json'), 'utf8'),
        );
        return env.spawn(process.execPath, [dshBin(), '--profile', 'fresh', '--patch', sandbox.overlay], {
          env: dshEnv,
          cwd: env.workdir,
        });
      },
    };
    await withStack(installed, signal, async (stack) => {
      const task = marker('installed');
      stack.model.addScenarios([
        { name: task, match: turnStart(task), reply: { type: 'text', text: `DONE ${task}` } },
      ]);
      const proc = await stack.startBridge(installed);
      expect(profileManifest, 'dsh plugin add recorded the bundle in the profile').toMatchObject({
        dsh: { profile: { bundles: ['@deepseek-ai/dsh-base', '@agentmail/bridge-dsh'] } },
      });
      // The overlay has no agentmail row: the row came from the bundle's own cordis.patch.yml.
      await proc.waitForEvent('ready', STEP_MS);
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Hi ${task}`,
        body: 'hello',
      });
      const reply = await stack.awaitReply({
        inReplyTo: sent.mail_id,
        from: stack.agent.name,
        timeoutMs: STEP_MS,
      });
      expect(reply.body).toContain(`DONE ${task}`);
      expect(
        proc.bridgeEvents('stream_open')[0],
        "the bridge's line on dsh's stderr: connected",
      ).toMatchObject({
        connection: 1,
      });
    });
  });

  it("DSH_PERMISSION_MODE=danger-full-access: a mail's workspace mode still asks by mail (the mail's mode governs, P-1)", async ({
    signal,
  }) => {
    // dsh's own approval policy under danger-full-access is `never` (every ask rejected unasked);
    // the guarded tool is decided in pre-execute by the mail's mode instead.
    const adapter = createDshAdapter({ env: () => ({ DSH_PERMISSION_MODE: 'danger-full-access' }) });
    const scenario = CONFORMANCE_SCENARIOS.find((c) => c.run === guardedToolRunsAfterApproval);
    if (scenario === undefined) throw new Error('no guarded-tool-approved scenario');
    await runConformanceScenario(scenario, adapter, { signal });
  });

  it('SIGTERM: dsh exits 0 after the bridge stopped (lock released, B-15)', async ({ signal }) => {
    const adapter = createDshAdapter();
    await withStack(adapter, signal, async (stack) => {
      const proc = await stack.startBridge(adapter);
      await proc.waitForEvent('ready', STEP_MS);
      const exit = await stack.stopBridge();
      expect(exit).toMatchObject({ code: 0 });
      expect(proc.bridgeEvents('stopped'), 'the kit finished its stop before dsh exited').toHaveLength(1);
    });
  });

  it("web profile: a person's own web session still gets DSH's own approval prompt (the bridge does not take it)", async ({
    signal,
  }) => {
    const adapter = createDshAdapter({ profile: 'web' });
    await withStack(adapter, signal, async (stack) => {
      const mark = marker('websession');
      stack.model.addScenarios(escalation(mark));
      const proc = await stack.startBridge(adapter);
      const person = await WebPerson.open(webUrl(proc));
      try {
        const { sessionId } = (await person.call('session.create', { cwd: stack.workdir })) as {
          sessionId: string;
        };
        await person.call('session.prompt', {
          sessionId,
          mode: 'queue',
          content: [{ type: 'text', text: `Run it ${mark}` }],
        });
        const prompt = await person.waitFor(
          (f) => f.payload.type === 'approval/requested' && f.payload.sessionId === sessionId,
          STEP_MS,
        );
        expect(prompt.payload.toolName).toBe('bash');
        expect(
          await stack.person.permissions('all'),
          'no permission mail for a session a person opened in DSH',
        ).toEqual([]);
        expect(proc.bridgeEvents('dsh_approval_answered'), 'our answerer did not run').toEqual([]);
        expect(proc.bridgeEvents('permission_asked')).toEqual([]);
        // The person answers in the browser; DSH goes on with that answer.
        const receipt = await person.respond(prompt.rpcId, {
          sessionId,
          approvalId: prompt.payload.approvalId,
          outcome: 'rejected',
        });
        expect(receipt).toEqual({ accepted: true });
        await stack.awaitModelRequest({ lastUserMessage: mark, hasToolResult: true }, STEP_MS);
        expect(toolResultsSeen(stack.model, mark)).not.toContain(`ESC-${mark}`);
      } finally {
        person.close();
      }
    });
  });

  it('web profile: DSH’s own ask in a mail turn (a sandbox escalation) is asked by mail before the web answerer; approve → allowed-once, deny → rejected', async ({
    signal,
  }) => {
    const adapter = createDshAdapter({ profile: 'web' });
    await withStack(adapter, signal, async (stack) => {
      const [yes, no] = [marker('esc-yes'), marker('esc-no')];
      for (const m of [yes, no]) stack.model.addScenarios(escalation(m));
      const proc = await stack.startBridge(adapter);
      const web = await WebPerson.open(webUrl(proc));
      try {
        const escalate = async (m: string, second: 'approve' | 'deny'): Promise<string> => {
          const sent = await stack.sendAs(undefined, stack.taskAddress(), {
            subject: `Escalate ${m}`,
            body: 'Run it.',
            permissionMode: 'workspace',
          });
          // First the guarded tool itself (bash, pre-execute), then DSH's own ask about the escalation.
          const tool = await stack.awaitPermission({ timeoutMs: STEP_MS });
          expect(tool.question).toContain('bash');
          await stack.decide(tool.id, 'approve');
          const ask = await stack.awaitPermission({ timeoutMs: STEP_MS });
          expect(ask).toMatchObject({ kind: 'approval', session_id: sent.session_id });
          expect(ask.question).toContain('dsh approval');
          await stack.decide(ask.id, second);
          const reply = await stack.awaitReply({
            inReplyTo: sent.mail_id,
            from: stack.agent.name,
            timeoutMs: STEP_MS,
          });
          return reply.body;
        };
        expect(await escalate(yes, 'approve')).toContain(`ESC-${yes}`);
        expect(proc.bridgeEvents('dsh_approval_answered').map((e) => e.outcome)).toEqual(['allowed-once']);
        const denied = await escalate(no, 'deny');
        expect(denied).toContain(`AFTER ${no}`);
        expect(denied).not.toContain(`ESC-${no}`);
        expect(proc.bridgeEvents('dsh_approval_answered').map((e) => e.outcome)).toEqual([
          'allowed-once',
          'rejected',
        ]);
        expect(
          web.frames.filter((f) => f.payload.type === 'approval/requested'),
          "the web host's answerer never saw the mail sessions' asks",
        ).toEqual([]);
      } finally {
        web.close();
      }
    });
  });
});
