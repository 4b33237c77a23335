import { existsSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { API_PREFIX, formatAddress } from '@agentmail/protocol';
import { formatText } from '@agentmail/shared-policy';
import type { HostHarness, Scenario } from '@agentmail/testkit';
import {
  agentKeyStaysInBridge,
  CONFORMANCE_MODELS,
  mailIdOf,
  mailToolCall,
  marker,
  runDiesWithDriver,
  runEndsWithItsTurn,
  shellCall,
  shellThenAnswer,
  textPattern,
  toolResultsSeen,
  turnStart,
  unexpectedResult,
  within,
} from '@agentmail/testkit/conformance';
import { ZCODE_STANDIN_PERMISSION_CLIENT_ENV } from '@agentmail/testkit/zcode';
import { describe, expect, it } from 'vitest';
import { personZcode, stackPerFile } from '../harness/person.js';
import {
  bundled,
  createZcodeAdapter,
  writeZcodeConfig,
  zcodeAdapter,
  zcodeConfig,
} from '../harness/zcode-adapter.js';

// The daemon and a person's own ZCode (the testkit stand-in) on one real Gateway, for what the
// conformance suite does not look at: the `plan` fallback for `workspace`, the setup check (P-8),
// the agent key kept out of ZCode (B-21), the plugin's hook in a person's own ZCode (yield, and
// "always" across hook processes, P-4, P-5), and a Gateway that goes down while a mail-driven call
// waits (fail closed). One stack for the file; each test stops the bridge it started; the Gateway
// test is last (it kills the Gateway).

const STEP_MS = 45_000;
const current = stackPerFile();

/** The model of a turn carrying `mark`: one shell call of `command`, then a text with what it saw. */
function shellThenEnd(mark: string, command: string): Scenario[] {
  return shellThenAnswer(
    zcodeAdapter,
    mark,
    command,
    (r) => `END ${r.toolResults.map((t) => t.text).join(' | ')}`,
  );
}

/**
 * Start the bridge with `adapter`, mail it a task, and return the failure mail it answers with
 * (the caller stops the bridge; on a failure here it is stopped before the error goes on).
 */
async function failureMail(adapter: HostHarness, label: string) {
  const stack = current();
  const bridge = await stack.startBridge(adapter);
  try {
    const task = marker(label);
    const sent = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Run ${task}`, body: 'Run.' });
    const failure = await stack.awaitReply({
      inReplyTo: sent.mail_id,
      from: stack.agent.name,
      timeoutMs: STEP_MS,
    });
    return { stack, bridge, task, sent, failure };
  } catch (err) {
    await stack.stopBridge();
    throw err;
  }
}

describe('agentmail-zcode', () => {
  it('the plan fallback: a workspace mail runs as ZCode plan, says why, and guarded built-ins are refused without asking', async () => {
    const stack = current();
    const task = marker('fallback');
    const file = join(stack.workdir, `fallback-${task}.txt`);
    stack.model.addScenarios([
      // The mail tools are not destructive: ZCode's plan mode lets them run.
      {
        name: `${task}:read`,
        match: turnStart(task),
        reply: (r) => mailToolCall(zcodeAdapter, 'read_mail', { mail_id: mailIdOf(r) }),
      },
      {
        name: `${task}:shell`,
        match: { lastUserMessage: task, toolResultContains: `BODY-${task}` },
        reply: shellCall(zcodeAdapter, `echo RAN > ${file}`),
      },
      {
        name: `${task}:answer`,
        match: { lastUserMessage: task, toolResultContains: 'Plan mode' },
        reply: { type: 'text', text: `REFUSED ${task}` },
      },
      unexpectedResult(task),
    ]);
    const bridge = await stack.startBridge(
      createZcodeAdapter({ env: { AGENTMAIL_ZCODE_WORKSPACE_MODE: 'plan' } }),
    );
    try {
      const sent = await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Fallback ${task}`,
        body: `Write the file. BODY-${task}`,
        permissionMode: 'workspace',
      });
      const reply = await stack.awaitReply({
        inReplyTo: sent.mail_id,
        from: stack.agent.name,
        timeoutMs: STEP_MS,
      });
      expect(reply.body).toContain(`REFUSED ${task}`);
      expect(existsSync(file), 'the refused shell did not run').toBe(false);
      expect(bridge.bridgeEvents('zcode_mode_mapped')).toEqual([
        expect.objectContaining({ mail_id: sent.mail_id, mode: 'workspace', zcode_mode: 'plan' }),
      ]);
      expect(bridge.bridgeEvents('zcode_spawned').find((e) => e.mail_id === sent.mail_id)).toMatchObject({
        zcode_mode: 'plan',
      });
      const asked = (await stack.person.permissions('all')).filter((p) => JSON.stringify(p).includes(task));
      expect(asked, 'nobody was asked').toEqual([]);
    } finally {
      await stack.stopBridge();
    }
  });

  it('a plugin without its hooks: advisory enforcement, and a mail fails with the setup cause before ZCode runs (P-8)', async () => {
    const stack = current();
    const { pluginDir } = await bundled();
    const broken = join(stack.bridgeStateDir, `broken-plugin-${marker('p')}`);
    await cp(pluginDir, broken, { recursive: true });
    await rm(join(broken, 'hooks'), { recursive: true });
    const { bridge, task, sent, failure } = await failureMail(
      createZcodeAdapter({ pluginDir: broken }),
      'broken',
    );
    try {
      const check = bridge.bridgeEvents('self_check')[0];
      expect(check?.ok).toBe(false);
      expect(check?.reason).toContain('PreToolUse');
      expect(bridge.bridgeEvents('enforcement')[0]).toMatchObject({ mode: 'advisory' });
      expect(failure.body).toContain(
        formatText('host.setup.hooks_missing', { host: 'ZCode', detail: '' }).slice(0, 30),
      );
      expect(stack.model.requests({ match: { lastUserMessage: task } }), 'the model was never asked').toEqual(
        [],
      );
      expect(bridge.bridgeEvents('zcode_spawned').filter((e) => e.mail_id === sent.mail_id)).toEqual([]);
      await bridge.waitForEvent(
        'turn_failed',
        STEP_MS,
        (e) => e.mail_id === sent.mail_id && e.kind === 'bridge_setup',
      );
    } finally {
      await stack.stopBridge();
    }
  });

  it("a Bash call cannot read the agent key: ZCode's environment has only the turn token (B-21)", async () => {
    const stack = current();
    try {
      const { mailId } = await agentKeyStaysInBridge(stack, zcodeAdapter);
      const bridge = stack.bridge;
      expect(bridge?.bridgeEvents('zcode_spawned').find((e) => e.mail_id === mailId)).toMatchObject({
        zcode_mode: 'yolo',
      });
    } finally {
      await stack.stopBridge();
    }
  });

  it('a timed-out run is stopped whole: no process of it (also the Bash command) is alive once the failure mail is sent (B-7, B-15)', async () => {
    await runEndsWithItsTurn(current(), zcodeAdapter);
  });

  it('kill -9 of the daemon during a run: no process of the run (ZCode, its MCP server, the Bash command) is alive 2 s later; the restart answers once (B-15)', async () => {
    await runDiesWithDriver(current(), zcodeAdapter);
  });
});

describe('adopted ZCode sessions (G-25, G-37, B-4, B-8)', () => {
  it("the person's session is offered in the heartbeat and a mail to it resumes it, with its model", async () => {
    const stack = current();
    const earlier = marker('earlier');
    const later = marker('later');
    stack.model.addScenarios([
      {
        name: `${earlier}:person`,
        match: { lastUserMessage: earlier, hasToolResult: false },
        reply: { type: 'text', text: `Noted ${earlier}` },
      },
      {
        name: `${later}:mail`,
        match: { lastUserMessage: later, hasToolResult: false },
        reply: (r) => ({
          type: 'text',
          text: `CONTINUED ${later} remembers=${r.body?.messages.some((m) => JSON.stringify(m.content).includes(earlier))}`,
        }),
      },
    ]);
    // The person's own run in the bridge's HOME (the daemon reads the same ~/.zcode), on a model
    // of their choice.
    const env = stack.bridgeEnv(zcodeAdapter);
    const home = env.processEnv.HOME ?? '';
    writeZcodeConfig(home, zcodeConfig(env, [(await bundled()).pluginDir]));
    const person = await personZcode({
      home,
      cwd: stack.workdir,
      prompt: `Remember ${earlier}`,
      mode: 'plan',
      env: { ZCODE_MODEL: `${env.modelProvider}/${CONFORMANCE_MODELS.working}` },
    });
    expect(person.report.code, person.report.stderrTail).toBe(0);
    const sessionId = person.sessionId ?? '';
    expect(sessionId).toMatch(/^sess_/);

    const bridge = await stack.startBridge(zcodeAdapter);
    try {
      const sent = await stack.sendAs(
        undefined,
        formatAddress({ name: stack.agent.name, path: '', session: sessionId }),
        { subject: `Continue ${later}`, body: 'Go on.' },
      );
      const reply = await stack.awaitReply({
        inReplyTo: sent.mail_id,
        from: stack.agent.name,
        timeoutMs: STEP_MS,
      });
      expect(reply.body).toContain(`CONTINUED ${later} remembers=true`);
      expect(
        bridge.bridgeEvents('zcode_spawned').find((e) => e.mail_id === sent.mail_id),
        'resumed by its id, with the model of the session',
      ).toMatchObject({ resume: true, model: `${env.modelProvider}/${CONFORMANCE_MODELS.working}` });
      expect(stack.model.requests({ scenario: `${later}:mail` })[0]?.model).toBe(CONFORMANCE_MODELS.working);
      expect(sent.address, 'the adopted session kept its working directory').toContain(stack.workdir);
    } finally {
      await stack.stopBridge();
    }
  });
});

describe("failure mails carry ZCode's own cause (B-9)", () => {
  it('no model in ZCode\'s configuration: "Model config is missing", once, not "adjust the model scope"', async () => {
    // ZCode's config.json without providers or model.main; the plugin stays in plugins.dirs.
    const { stack, bridge, sent, failure } = await failureMail(
      createZcodeAdapter({ config: (c) => ({ plugins: c.plugins }) }),
      'nomodel',
    );
    try {
      expect(failure.body).toContain('Model config is missing');
      expect(failure.body).toContain(formatText('failure.bridge_setup', {}));
      expect(failure.body).not.toContain(formatText('failure.all_models_failed', {}));
      expect(
        bridge.bridgeEvents('zcode_spawned').filter((e) => e.mail_id === sent.mail_id),
        'one run: the same set-up problem for every model',
      ).toHaveLength(1);
    } finally {
      await stack.stopBridge();
    }
  });

  it('ZCode not installed: advisory at start, and the mail names the missing command and its variable', async () => {
    const missing = join(current().bridgeStateDir, 'no-such-zcode');
    const { stack, bridge, failure } = await failureMail(
      createZcodeAdapter({ env: { AGENTMAIL_ZCODE_BIN: missing } }),
      'nobin',
    );
    try {
      expect(bridge.bridgeEvents('enforcement')[0]).toMatchObject({ mode: 'advisory' });
      expect(failure.body).toContain('AGENTMAIL_ZCODE_BIN');
      expect(failure.body).toContain('could not be started');
    } finally {
      await stack.stopBridge();
    }
  });
});

describe("a person's own ZCode with the plugin (no bridge, no turn RPC)", () => {
  /** The person's HOME: their config with the scripted model and the built plugin in plugins.dirs. */
  async function personHome(name: string): Promise<string> {
    const stack = current();
    const { pluginDir } = await bundled();
    const home = join(stack.bridgeStateDir, `person-${name}`);
    writeZcodeConfig(home, zcodeConfig(stack.bridgeEnv(zcodeAdapter), [pluginDir]));
    return home;
  }

  it("without an AgentMail session the hook yields: ZCode's own permission client decides (P-5)", async () => {
    const stack = current();
    const home = await personHome(marker('yield'));
    const task = marker('yield');
    const file = join(stack.workdir, `yield-${task}.txt`);
    stack.model.addScenarios(shellThenEnd(task, `echo RAN-${task} > ${file}`));
    // Headless ZCode: no permission client, the deny broker answers the ask.
    const headless = await personZcode({ home, cwd: stack.workdir, prompt: `Do ${task}`, mode: 'build' });
    expect(headless.report.code, headless.report.stderrTail).toBe(0);
    expect(headless.lines.some((l) => l.kind === 'step' && l.type === 'permission.requested')).toBe(true);
    expect(toolResultsSeen(stack.model, task)).toContain('No permission client configured for Bash');
    expect(existsSync(file)).toBe(false);
    // ZCode with a prompt (the "ask works" variant): the person at ZCode's own prompt allows it.
    const task2 = marker('yield2');
    const file2 = join(stack.workdir, `yield-${task2}.txt`);
    stack.model.addScenarios(shellThenEnd(task2, `echo RAN > ${file2}`));
    const prompted = await personZcode({
      home,
      cwd: stack.workdir,
      prompt: `Do ${task2}`,
      mode: 'build',
      env: { [ZCODE_STANDIN_PERMISSION_CLIENT_ENV]: 'person-allows' },
    });
    expect(prompted.report.code, prompted.report.stderrTail).toBe(0);
    expect(existsSync(file2), "ZCode's own prompt allowed the call: the hook did not stand in the way").toBe(
      true,
    );
    expect((await stack.person.permissions('all')).filter((p) => JSON.stringify(p).includes(task2))).toEqual(
      [],
    );
  });

  it('with the person\'s AgentMail session the hook asks by mail; "always" holds in the next ZCode process, "deny" carries the note (P-4, P-6)', async () => {
    const stack = current();
    const home = await personHome(marker('always'));
    const task = marker('always');
    // The Gateway session this ZCode session works for: a mail the person sent the agent.
    const sent = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Work ${task}`,
      body: 'Work here.',
    });
    const env = {
      AGENTMAIL_GATEWAY_URL: stack.gatewayUrl,
      AGENTMAIL_AGENT_KEY: stack.agent.key,
      AGENTMAIL_AGENT_NAME: stack.agent.name,
      AGENTMAIL_SESSION_ID: sent.session_id,
      // Whatever the hooks leave undecided is denied, so every allow below is the hook's.
      [ZCODE_STANDIN_PERMISSION_CLIENT_ENV]: 'person-denies',
    };
    const run = async (mark: string): Promise<Awaited<ReturnType<typeof personZcode>>> => {
      stack.model.addScenarios(shellThenEnd(mark, `echo RAN-${mark}`));
      return personZcode({ home, cwd: stack.workdir, prompt: `Do ${mark}`, mode: 'build', env });
    };

    const first = marker('first');
    const firstRun = run(first);
    const ask = await stack.awaitPermission({
      where: (p) => JSON.stringify(p).includes(`RAN-${first}`),
      timeoutMs: STEP_MS,
    });
    await stack.decide(ask.id, 'always');
    const r1 = await within(firstRun, STEP_MS, 'the first person run');
    expect(r1.report.code, r1.report.stderrTail).toBe(0);
    expect(toolResultsSeen(stack.model, first)).toContain(`RAN-${first}`);

    // A new ZCode process, new hook processes: the grant in the plugin's data directory allows
    // the call at PreToolUse, before ZCode would ask.
    const second = marker('second');
    // Without the grant the hook would ask by mail and wait: answer such a question with a denial
    // at once, so a broken grant fails the expectations below instead of hanging the test.
    void stack
      .awaitPermission({ where: (p) => JSON.stringify(p).includes(`RAN-${second}`), timeoutMs: STEP_MS })
      .then((p) => stack.decide(p.id, 'deny', 'asked again'))
      .catch(() => undefined);
    const r2 = await run(second);
    expect(r2.report.code, r2.report.stderrTail).toBe(0);
    expect(toolResultsSeen(stack.model, second)).toContain(`RAN-${second}`);
    expect(
      r2.lines.some((l) => l.kind === 'step' && l.type === 'permission.requested'),
      'no ask',
    ).toBe(false);
    expect(
      (await stack.person.permissions('all')).filter((p) => JSON.stringify(p).includes(`RAN-${second}`)),
    ).toEqual([]);

    // Another session has no grant: asked again, and the person's note reaches the model.
    const other = await stack.sendAs(undefined, stack.taskAddress(), { subject: `Other ${task}`, body: 'x' });
    env.AGENTMAIL_SESSION_ID = other.session_id;
    const third = marker('third');
    const thirdRun = run(third);
    const ask3 = await stack.awaitPermission({
      where: (p) => JSON.stringify(p).includes(`RAN-${third}`),
      timeoutMs: STEP_MS,
    });
    await stack.decide(ask3.id, 'deny', `not now ${third}`);
    const r3 = await within(thirdRun, STEP_MS, 'the third person run');
    expect(r3.report.code, r3.report.stderrTail).toBe(0);
    const seen = toolResultsSeen(stack.model, third);
    expect(seen).toContain(`not now ${third}`);
    expect(seen).not.toContain(`RAN-${third}\n`);
  });
});

describe('the Gateway goes down (last: it kills the Gateway)', () => {
  it('a mail-driven guarded call whose ask cannot reach the Gateway is denied (fail closed, P-5)', async () => {
    const stack = current();
    const task = marker('down');
    const file = join(stack.workdir, `down-${task}.txt`);
    stack.model.addScenarios(shellThenEnd(task, `echo RAN > ${file}`));
    const bridge = await stack.startBridge(zcodeAdapter);
    try {
      const held = stack.proxy.holdNextRequest(
        (method, path) => method === 'POST' && path === `${API_PREFIX}/permission/request`,
      );
      await stack.sendAs(undefined, stack.taskAddress(), {
        subject: `Down ${task}`,
        body: 'Write the file.',
        permissionMode: 'workspace',
      });
      const ask = await within(held, STEP_MS, "the bridge's permission ask");
      stack.gateway.kill();
      await within(stack.gateway.exited, STEP_MS, 'the Gateway exit');
      await ask.release();
      const failed = await bridge.waitForEvent('permission_failed', STEP_MS, (e) => e.tool === 'Bash');
      expect(failed.outcome).toBe('deny');
      await stack.awaitModelRequest({ lastUserMessage: task, hasToolResult: true }, STEP_MS);
      const seen = toolResultsSeen(stack.model, task);
      expect(seen).toMatch(textPattern('permission.failure.unavailable'));
      expect(existsSync(file), 'the denied shell did not run').toBe(false);
    } finally {
      await stack.stopBridge();
    }
  });
});
