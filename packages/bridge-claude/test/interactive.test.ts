import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Stack, startStack } from '@agentmail/testkit';
import { marker } from '@agentmail/testkit/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundled, removeBundle } from '../harness/claude-adapter.js';
import { personClaude } from '../harness/person.js';
import { MAIL_TOOL_PREFIX } from '../src/constants.js';
import type { StreamLine } from '../src/stream-json.js';

// A person's own Claude Code with the plugin installed (no bridge, no turn RPC): the plugin's
// hooks give no decision, so Claude Code's own permission rules and prompt stay in charge (P-5),
// and the mail tools work standalone with the person's configured key.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ agentName: 'my-claude', platform: 'claude-code' });
}, 90_000);
afterAll(async () => {
  await stack?.close();
  await removeBundle();
});

/** Run the person's `claude -p` with the plugin, their own settings and AgentMail configuration. */
async function personRun(
  prompt: string,
  settings: Record<string, unknown>,
): Promise<{ hooks: StreamLine[] }> {
  const { pluginDir } = await bundled();
  const home = join(stack.bridgeStateDir, 'person-home');
  const { report, hooks } = await personClaude({
    stack,
    home,
    tmp: join(home, 'tmp'),
    cwd: stack.workdir,
    // -p has no prompt to show: a tool the person did not allow is denied by Claude Code itself.
    args: [
      '--plugin-dir',
      pluginDir,
      '--settings',
      JSON.stringify(settings),
      '--allowedTools',
      MAIL_TOOL_PREFIX.replace(/__$/, ''),
    ],
    prompt,
    env: { AGENTMAIL_GATEWAY_URL: stack.gatewayUrl, AGENTMAIL_AGENT_KEY: stack.agent.key },
  });
  expect(report.result, report.stderrTail).toBeDefined();
  return { hooks };
}

describe("a person's own Claude Code with the plugin", () => {
  it("keeps Claude Code's own rules: the person's allow rule runs the command, an unallowed write is Claude's own denial (P-5)", async () => {
    const task = marker('own');
    const file = join(stack.workdir, `own-${task}.txt`);
    stack.model.addScenarios([
      {
        name: `${task}:echo`,
        match: { lastUserMessage: task, hasToolResult: false },
        reply: {
          type: 'tool_calls',
          calls: [{ name: 'Bash', arguments: { command: `echo RAN-${task}`, description: 'echo' } }],
        },
      },
      {
        name: `${task}:write`,
        match: { lastUserMessage: task, toolResultContains: `RAN-${task}` },
        reply: {
          type: 'tool_calls',
          calls: [{ name: 'Write', arguments: { file_path: file, content: 'x' } }],
        },
      },
      {
        name: `${task}:done`,
        match: { lastUserMessage: task, hasToolResult: true },
        reply: (r) => ({ type: 'text', text: `END ${r.toolResults.map((t) => t.text).join(' | ')}` }),
      },
    ]);
    const { hooks } = await personRun(`Do ${task}`, { permissions: { allow: ['Bash(echo:*)'] } });
    const pre = hooks.filter((h) => h.kind === 'hook_response' && h.line.hook_event === 'PreToolUse');
    expect(pre.length, 'our PreToolUse hook ran for both calls').toBe(2);
    for (const h of pre)
      if (h.kind === 'hook_response') expect(h.line).toMatchObject({ exit_code: 0, outcome: 'success' });
    const results = stack.model.requests({ match: { lastUserMessage: task, hasToolResult: true } });
    expect(results[0]?.toolResults[0]?.text, "the person's allow rule let echo run").toContain(`RAN-${task}`);
    expect(
      results[1]?.toolResults[0]?.text,
      'Claude Code itself refused the write (no hook text)',
    ).not.toContain('hook');
    expect(existsSync(file)).toBe(false);
  });

  it("the mail tools run standalone with the person's key", async () => {
    const task = marker('inbox');
    await stack.sendAs(undefined, stack.taskAddress(), { subject: `Note ${task}`, body: 'hello' });
    stack.model.addScenarios([
      {
        name: `${task}:inbox`,
        match: { lastUserMessage: task, hasToolResult: false },
        reply: { type: 'tool_calls', calls: [{ name: `${MAIL_TOOL_PREFIX}read_inbox`, arguments: {} }] },
      },
      {
        name: `${task}:done`,
        match: { lastUserMessage: task, hasToolResult: true },
        reply: { type: 'text', text: 'ok' },
      },
    ]);
    await personRun(`Check ${task}`, {});
    const [seen] = stack.model.requests({ match: { lastUserMessage: task, hasToolResult: true } });
    expect(seen?.toolResults[0]?.text).toContain(`Note ${task}`);
  });
});
