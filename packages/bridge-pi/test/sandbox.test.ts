/**
 * pi in the workspace sandbox (SPEC P-1, P-12) on the real pi SDK and the real bubblewrap: with
 * `AGENTMAIL_SANDBOX=workspace` the daemon's self-check holds, its heartbeat says `verified`, and a
 * mail in `workspace` mode runs a shell write inside the workspace without asking anyone while a
 * write outside fails with the kernel's words, which the model reads. pi's read tools (`read`,
 * `ls`, `find`, `grep`) see the workspace but nothing the sandbox hides, by path or through a
 * symlink. The same mail with bubblewrap missing asks the person per call, and the agent's status
 * says why.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_MODEL_ID, type RecordedRequest } from '@agentmail/testkit';
import {
  answerAtOnce,
  marker,
  shellCall,
  startConformanceStack,
  toolResultsSeen,
  turnStart,
  unexpectedResult,
} from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it } from 'vitest';
import { piSessionFolder } from '../bench/pi-session-file.js';
import { piAdapter, piStateDirs, removeBundle, writePiModels } from '../harness/pi-adapter.js';
import { importPiSdk } from '../src/pi-sdk.js';

afterAll(removeBundle);

/** On the real root filesystem (not a private /tmp): a write here proves the sandbox failed. */
const OUTSIDE_DIR = '/var/lib';

/** pi's read-only tools besides `read`: off in a session unless its tool set names them. */
const SEARCH_TOOLS = ['ls', 'find', 'grep'];

/** The text of each tool result the model was shown for the turns of `mark`, by tool call id. */
function resultsById(requests: readonly RecordedRequest[]): Map<string, string> {
  return new Map(requests.flatMap((r) => r.toolResults.map((t) => [t.toolCallId, t.text] as const)));
}

/**
 * A workspace with a file of its own and a symlink to `hidden` (a place the sandbox hides), made a
 * repository as most workspaces are (pi's own `find` also needs one with Debian's fd 8.6, which
 * lacks `--no-require-git`: without the sandbox it really runs, and really leaks).
 */
async function workspaceWithLinkTo(workdir: string, task: string, hidden: string): Promise<void> {
  await mkdir(join(workdir, '.git'), { recursive: true });
  await writeFile(join(workdir, `visible-${task}.txt`), `VISIBLE-${task}\n`);
  await mkdir(hidden, { recursive: true });
  await symlink(hidden, join(workdir, `link-${task}`));
}

// Concurrent tests: each closes its own stack through its own context's onTestFinished.
describe('pi in the workspace sandbox (P-12)', () => {
  it.concurrent('verified: a shell write in the workspace runs unasked; one outside fails with EROFS, which the model reads', async ({
    signal,
    onTestFinished,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('sandboxed');
    const outside = join(OUTSIDE_DIR, `agentmail-${task}.txt`);
    onTestFinished(() => {
      if (existsSync(outside)) throw new Error(`the sandbox let a write out: ${outside}`);
    });
    stack.model.addScenarios([
      {
        name: `${task}:shell`,
        match: turnStart(task),
        reply: shellCall(
          piAdapter,
          `echo IN-${task} > in-${task}.txt; echo OUT > ${outside}; cat in-${task}.txt`,
        ),
      },
      {
        name: `${task}:answer`,
        match: { lastUserMessage: task, toolResultContains: `IN-${task}` },
        reply: { type: 'text', text: `DONE ${task}` },
      },
      unexpectedResult(task),
    ]);
    await stack.startBridge(piAdapter, { AGENTMAIL_SANDBOX: 'workspace' });
    const me = (await stack.person.contacts()).find((c) => c.name === stack.agent.name);
    expect(me?.sandbox, 'the first heartbeat said the self-check held').toBe('verified');

    const sent = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Sandboxed ${task}`,
      body: 'Run it.',
      permissionMode: 'workspace',
    });
    const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name });
    expect(reply.body).toContain(`DONE ${task}`);
    expect(readFileSync(join(stack.workdir, `in-${task}.txt`), 'utf8')).toBe(`IN-${task}\n`);
    expect(existsSync(outside), 'the write outside the workspace did not land').toBe(false);
    expect(toolResultsSeen(stack.model, task), 'the kernel said why, and the model read it').toMatch(
      /Read-only file system/,
    );
    expect(
      (await stack.person.permissions('all')).filter((r) => r.session_id === sent.session_id),
      'nobody was asked: the sandbox confined the call',
    ).toEqual([]);

    // A mail to workspace / would bind everything back read-write: no sandbox, the call asks.
    const wide = marker('rootws');
    stack.model.addScenarios([
      { name: `${wide}:shell`, match: turnStart(wide), reply: shellCall(piAdapter, `echo OUT > ${outside}`) },
      {
        name: `${wide}:answer`,
        match: { lastUserMessage: wide, hasToolResult: true },
        reply: { type: 'text', text: `NOTED ${wide}` },
      },
    ]);
    const root = await stack.sendAs(undefined, stack.taskAddress('new', '/'), {
      subject: `Everywhere ${wide}`,
      body: 'Run it.',
      permissionMode: 'workspace',
    });
    const asked = await stack.awaitPermission({ where: (r) => r.session_id === root.session_id });
    expect(asked.context).toContain('Sandbox: verified, not used for this workspace: the workspace is /');
    await stack.decide(asked.id, 'deny');
    await stack.awaitReply({ inReplyTo: root.mail_id, from: stack.agent.name });
    expect(existsSync(outside), 'denied: nothing ran').toBe(false);
  });

  it.concurrent("verified: pi's read sees the workspace; the bridge's data dir, pi's model keys and ~/.ssh read as missing, by path and through a symlink", async ({
    signal,
    onTestFinished,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('readhidden');
    const { agentDir, dataDir } = piStateDirs(stack.bridgeStateDir);
    const secret = `SECRET-${task}`;
    await workspaceWithLinkTo(stack.workdir, task, dataDir);
    await writeFile(join(dataDir, `secret-${task}.txt`), `${secret}\n`);
    const sshKey = join(stack.bridgeStateDir, 'home', '.ssh', 'id_agentmail_test');
    await mkdir(join(stack.bridgeStateDir, 'home', '.ssh'), { recursive: true });
    await writeFile(sshKey, `${secret}\n`);
    const reads = {
      workspace: `visible-${task}.txt`,
      dataDir: join(dataDir, `secret-${task}.txt`),
      throughLink: `link-${task}/secret-${task}.txt`,
      // pi's agent directory: models.json holds the provider's apiKey (auth.json the logins).
      modelKeys: join(agentDir, 'models.json'),
      ssh: sshKey,
    };
    stack.model.addScenarios([
      {
        name: `${task}:read`,
        match: turnStart(task),
        reply: {
          type: 'tool_calls',
          calls: Object.entries(reads).map(([id, path]) => ({ id, name: 'read', arguments: { path } })),
        },
      },
      {
        name: `${task}:answer`,
        match: { lastUserMessage: task, toolResultContains: `VISIBLE-${task}` },
        reply: { type: 'text', text: `DONE ${task}` },
      },
      unexpectedResult(task),
    ]);
    await stack.startBridge(piAdapter, { AGENTMAIL_SANDBOX: 'workspace' });
    const me = (await stack.person.contacts()).find((c) => c.name === stack.agent.name);
    expect(me?.sandbox, 'the first heartbeat said the self-check held').toBe('verified');
    expect(readFileSync(reads.modelKeys, 'utf8'), 'there is a key to hide').toContain('apiKey');

    const sent = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Read ${task}`,
      body: 'Read them.',
      permissionMode: 'workspace',
    });
    const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name });
    expect(reply.body).toContain(`DONE ${task}`);
    const start = stack.model.requests({ match: turnStart(task) })[0];
    expect(start?.toolNames, "the confined read is offered as pi's own").toContain('read');
    expect(
      start?.toolNames.filter((n) => SEARCH_TOOLS.includes(n)),
      "replacing pi's read tools offers none that pi would not",
    ).toEqual([]);
    const seen = resultsById(stack.model.requests({ match: { lastUserMessage: task, hasToolResult: true } }));
    expect(seen.get('workspace'), 'a workspace file reads as usual').toBe(`VISIBLE-${task}\n`);
    for (const id of ['dataDir', 'throughLink', 'ssh'] as const) {
      expect(seen.get(id), `read ${id}: nothing of the hidden file`).not.toContain(secret);
      expect(seen.get(id), `read ${id}: the sandbox said it is not there`).toMatch(/No such file|^$/);
    }
    expect(seen.get('modelKeys'), "pi's model keys are out of reach").not.toContain('apiKey');
    expect(seen.get('modelKeys')).toMatch(/No such file/);
  });

  it.concurrent("verified: pi's ls, find and grep (a session whose tool set names them) see nothing of pi's agent dir through a symlink", async ({
    signal,
    onTestFinished,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('searchhidden');
    const { agentDir } = piStateDirs(stack.bridgeStateDir);
    const link = `link-${task}`;
    await workspaceWithLinkTo(stack.workdir, task, agentDir);
    const calls = {
      lsLink: { name: 'ls', arguments: { path: link } },
      findLink: { name: 'find', arguments: { pattern: '*', path: link } },
      grepLink: { name: 'grep', arguments: { pattern: 'apiKey', path: link } },
      lsWorkspace: { name: 'ls', arguments: {} },
      findWorkspace: { name: 'find', arguments: { pattern: 'visible-*' } },
      grepWorkspace: { name: 'grep', arguments: { pattern: `VISIBLE-${task}` } },
    };
    const own = marker('own');
    stack.model.addScenarios([
      answerAtOnce(own, 'Noted.'),
      {
        name: `${task}:search`,
        match: turnStart(task),
        reply: {
          type: 'tool_calls',
          calls: Object.entries(calls).map(([id, call]) => ({ id, ...call })),
        },
      },
      {
        name: `${task}:answer`,
        match: { lastUserMessage: task, toolResultContains: `VISIBLE-${task}` },
        reply: { type: 'text', text: `DONE ${task}` },
      },
      unexpectedResult(task),
    ]);
    // The person's own pi session with ls, find and grep on (as `pi --tools …` records its tool
    // set), there before the daemon's first heartbeat reports it; adopted by mail, pi restores that
    // tool set in the mail's turn.
    writePiModels(agentDir, {
      provider: stack.modelProvider,
      baseUrl: stack.model.baseUrl,
      ids: [DEFAULT_MODEL_ID],
    });
    const { sdk } = await importPiSdk();
    const settingsManager = sdk.SettingsManager.inMemory({
      compaction: { enabled: false },
      retry: { enabled: false },
    });
    const resourceLoader = new sdk.DefaultResourceLoader({
      cwd: stack.workdir,
      agentDir,
      settingsManager,
      noExtensions: true,
      noSkills: true,
      noPromptTemplates: true,
      noThemes: true,
      noContextFiles: true,
    });
    await resourceLoader.reload();
    const modelRuntime = await sdk.ModelRuntime.create({
      authPath: join(agentDir, 'auth.json'),
      modelsPath: join(agentDir, 'models.json'),
    });
    const model = modelRuntime.getModel(stack.modelProvider, DEFAULT_MODEL_ID);
    if (!model) throw new Error("the scripted model is not in pi's catalogue");
    const { session } = await sdk.createAgentSession({
      cwd: stack.workdir,
      agentDir,
      modelRuntime,
      model,
      sessionManager: sdk.SessionManager.create(
        stack.workdir,
        join(agentDir, 'sessions', piSessionFolder(stack.workdir)),
      ),
      settingsManager,
      resourceLoader,
      tools: ['read', 'bash', 'edit', 'write', ...SEARCH_TOOLS],
    });
    await session.prompt(own);
    const ownId = session.sessionId;
    session.dispose();

    await stack.startBridge(piAdapter, { AGENTMAIL_SANDBOX: 'workspace' });
    expect(readFileSync(join(agentDir, 'models.json'), 'utf8'), 'there is a key to hide').toContain('apiKey');

    const sent = await stack.sendAs(undefined, stack.taskAddress(ownId), {
      subject: `Search ${task}`,
      body: 'Look around.',
      permissionMode: 'workspace',
    });
    const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name });
    expect(reply.body).toContain(`DONE ${task}`);
    const start = stack.model.requests({ match: turnStart(task) })[0];
    expect(start?.toolNames, 'the adopted tool set').toEqual(expect.arrayContaining(SEARCH_TOOLS));
    const seen = resultsById(stack.model.requests({ match: { lastUserMessage: task, hasToolResult: true } }));
    expect(seen.get('lsWorkspace'), 'ls lists the workspace').toMatch(new RegExp(`visible-${task}\\.txt`));
    expect(seen.get('findWorkspace'), 'find finds in the workspace').toBe(`visible-${task}.txt`);
    expect(seen.get('grepWorkspace'), 'grep searches the workspace').toBe(
      `visible-${task}.txt:1: VISIBLE-${task}`,
    );
    expect(seen.get('lsLink'), "ls: pi's agent dir is an empty directory").toBe('(empty directory)');
    expect(seen.get('findLink'), 'find: nothing in it').toBe('No files found matching pattern');
    expect(seen.get('grepLink'), 'grep: no key in it').toBe('No matches found');
    for (const id of ['lsLink', 'findLink', 'grepLink'])
      expect(seen.get(id), `${id}: nothing of pi's agent dir`).not.toMatch(/models\.json|apiKey|sessions/);
  });

  it.concurrent('bubblewrap missing: unverified with the reason in the status, and the same mail asks per call', async ({
    signal,
    onTestFinished,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('unsandboxed');
    const file = join(stack.workdir, `asked-${task}.txt`);
    stack.model.addScenarios([
      {
        name: `${task}:shell`,
        match: turnStart(task),
        reply: shellCall(piAdapter, `echo RAN-${task} > ${file}; cat ${file}`),
      },
      {
        name: `${task}:answer`,
        match: { lastUserMessage: task, toolResultContains: `RAN-${task}` },
        reply: { type: 'text', text: `DONE ${task}` },
      },
      unexpectedResult(task),
    ]);
    await stack.startBridge(piAdapter, {
      AGENTMAIL_SANDBOX: 'workspace',
      AGENTMAIL_BWRAP: '/nonexistent/bwrap',
    });
    const me = (await stack.person.contacts()).find((c) => c.name === stack.agent.name);
    expect(me?.sandbox).toBe(
      'unverified: bubblewrap not found at AGENTMAIL_BWRAP=/nonexistent/bwrap (an absolute path of an executable)',
    );

    const sent = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Not sandboxed ${task}`,
      body: 'Run it.',
      permissionMode: 'workspace',
    });
    const request = await stack.awaitPermission({ where: (r) => r.session_id === sent.session_id });
    expect(existsSync(file), 'the call waits for the person').toBe(false);
    expect(request.context, 'the request says why the person is asked').toContain(
      'Sandbox: unverified: bubblewrap not found at AGENTMAIL_BWRAP=/nonexistent/bwrap',
    );
    await stack.decide(request.id, 'approve');
    const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, from: stack.agent.name });
    expect(reply.body).toContain(`DONE ${task}`);
    expect(readFileSync(file, 'utf8')).toBe(`RAN-${task}\n`);
  });
});
