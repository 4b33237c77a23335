import { formatAddress } from '@agentmail/protocol';
import { CONFORMANCE_MODELS, marker } from '@agentmail/testkit/conformance';
import { describe, expect, it } from 'vitest';
import { claudeAdapter, claudeDirs } from '../harness/claude-adapter.js';
import { personClaude, stackPerTest } from '../harness/person.js';

// A session the person started in their own Claude Code (same HOME as the bridge) shows up in the
// heartbeat (G-25, G-37) and receives mail: the bridge resumes it by its id, with its own model
// (B-4, B-8), and the model sees the person's earlier conversation.

const STEP_MS = 60_000;
const current = stackPerTest();

describe('adopted Claude Code sessions', () => {
  it("the person's session is offered in the heartbeat and a mail to it resumes it, with its model", async () => {
    const stack = current();
    const earlier = marker('earlier');
    const later = marker('later');
    stack.model.addScenarios([
      {
        name: 'person',
        match: { lastUserMessage: earlier, hasToolResult: false },
        reply: { type: 'text', text: `Noted ${earlier}` },
      },
      {
        name: 'mail',
        match: { lastUserMessage: later, hasToolResult: false },
        reply: (r) => ({
          type: 'text',
          text: `CONTINUED ${later} remembers=${r.body?.messages.some((m) => JSON.stringify(m.content).includes(earlier))}`,
        }),
      },
    ]);
    // The person's own run, in the bridge's HOME (the daemon reads the same ~/.claude).
    const { home, tmp } = claudeDirs(stack.bridgeStateDir);
    const { report: person } = await personClaude({
      stack,
      home,
      tmp,
      cwd: stack.workdir,
      args: ['--model', CONFORMANCE_MODELS.working],
      prompt: `Remember ${earlier}`,
    });
    const sessionId = person.result?.session_id ?? '';
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const bridge = await stack.startBridge(claudeAdapter);
    const sent = await stack.sendAs(
      undefined,
      formatAddress({ name: stack.agent.name, path: '', session: sessionId }),
      {
        subject: `Continue ${later}`,
        body: 'Go on.',
      },
    );
    expect(sent.session_id).toBeTruthy();
    const reply = await stack.awaitReply({
      inReplyTo: sent.mail_id,
      from: stack.agent.name,
      timeoutMs: STEP_MS,
    });
    expect(reply.body).toContain(`CONTINUED ${later} remembers=true`);
    const spawned = bridge.bridgeEvents('claude_spawned').find((e) => e.mail_id === sent.mail_id);
    expect(spawned, 'resumed by its id, with the model of the session').toMatchObject({
      resume: true,
      model: CONFORMANCE_MODELS.working,
    });
    const [request] = stack.model.requests({ scenario: 'mail' });
    expect(request?.model).toBe(CONFORMANCE_MODELS.working);
    expect(sent.address, 'the adopted session kept its working directory (from the transcript)').toContain(
      stack.workdir,
    );
  });
});
