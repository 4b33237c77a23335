/**
 * One headless `zcode --prompt` turn of the stand-in (v3.15.1 `cli/src/prompt-command.ts`
 * `runPrompt`): load the configuration and the session (`--resume`/`--continue`), the plugins of
 * `plugins.dirs` (MCP servers connected as a real MCP client, hooks as real processes), then the
 * model loop with ZCode's permission flow for every tool call:
 *
 * 1. PreToolUse hooks (`core/src/tool/executor/call-runner.ts`): a `deny` blocks in every mode,
 *    before the permission checks, and the model reads its reason;
 * 2. the mode rules (permissions.ts), with the hook's `allow`/`ask` applied;
 * 3. an ask: `permission.requested`, then the responders. Headless, ZCode has no permission
 *    client and installs a deny broker that answers at once ("No permission client configured for
 *    <Tool>", CLI 0.16.5 runtime and `headless-workflow.ts`); the PermissionRequest hooks race it
 *    and the first answer wins, the loser is aborted (`permission-responder-race.ts`: the broker
 *    is started first). `ZCODE_STANDIN_PERMISSION_CLIENT=person-allows|person-denies` switches to
 *    the "ask works" variant: a permission client exists (a person at ZCode's own prompt, as in
 *    the interactive UI) and the PermissionRequest hooks are heard first, the person's scripted
 *    answer deciding only when no hook decided;
 * 4. the tool runs (`tool.updated` started → result | error).
 *
 * Success: `turn.completed`, the `result` line, exit 0 (also when a tool was denied). Failure:
 * `turn.failed` and `Error: <message> (traceId: <id>)` on stderr, no result line, exit 1.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { ConfigError, loadConfig, resolveModel } from './config.js';
import { type HookRunResult, runHooks } from './hooks.js';
import { connectMcp, type McpTool } from './mcp.js';
import { askModel, type Block, type ConversationMessage, ModelError, type OfferedTool } from './model.js';
import { applyPreToolDecision, type CollaborationMode, checkPermission } from './permissions.js';
import { type LoadedPlugin, loadPlugins } from './plugins.js';
import { SessionStore, type StoredMessage, type StoredPart, sessionDbPath } from './session-store.js';
import { EventStream } from './stream.js';
import { BUILTIN_TOOLS, type BuiltinTool, type ToolOutput } from './tools.js';

/** Model requests one turn may make before it stops. @default 40 */
export const MAX_MODEL_REQUESTS = 40;

/** What `runPrompt` needs from the command line. */
export interface PromptOptions {
  prompt: string;
  mode: CollaborationMode;
  outputFormat: 'text' | 'json' | 'stream-json';
  cwd: string | undefined;
  resume: string | undefined;
  continueSession: boolean;
  verbose: boolean;
  disallowedTools: readonly string[];
}

/** Where the run writes. */
export interface PromptIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGTERM / SIGINT. */
  signal: AbortSignal;
}

type Tool = { kind: 'builtin'; tool: BuiltinTool } | { kind: 'mcp'; tool: McpTool };

const SYSTEM_PROMPT =
  "You are ZCode, a coding agent working in the user's project directory. Use the tools to do the task.";

function historyOf(messages: readonly StoredMessage[]): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  for (const m of messages) {
    if (m.role === 'user') {
      out.push({
        role: 'user',
        content: m.parts.flatMap((p) => (p.type === 'text' ? [{ type: 'text', text: p.text } as Block] : [])),
      });
      continue;
    }
    const content: Block[] = [];
    const results: Block[] = [];
    for (const p of m.parts) {
      if (p.type === 'text') content.push({ type: 'text', text: p.text });
      else {
        content.push({
          type: 'tool_use',
          id: p.callID,
          name: p.tool,
          input: (p.input ?? {}) as Record<string, unknown>,
        });
        results.push({ type: 'tool_result', tool_use_id: p.callID, content: p.output, is_error: p.isError });
      }
    }
    if (content.length > 0) out.push({ role: 'assistant', content });
    if (results.length > 0) out.push({ role: 'user', content: results });
  }
  return out;
}

const textOf = (blocks: readonly Block[]): string =>
  blocks
    .filter((b): b is Extract<Block, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('');

/** Run one prompt; resolves with the exit code. */
export async function runPrompt(options: PromptOptions, io: PromptIo): Promise<number> {
  const home = io.env.HOME ?? '/';
  if (options.prompt.trim() === '') {
    io.stderr('--prompt requires non-empty text.\n');
    return 1;
  }
  const cwd = options.cwd ? (isAbsolute(options.cwd) ? options.cwd : resolve(options.cwd)) : process.cwd();
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
    io.stderr(`Working directory does not exist: ${cwd}\n`);
    return 1;
  }
  const traceId = `trace_${randomBytes(8).toString('hex')}`;
  const events = new EventStream(traceId, options.outputFormat === 'stream-json', io.stdout);
  let store: SessionStore | undefined;
  let closeMcp: (() => Promise<void>) | undefined;
  let traceKnown = false;
  try {
    const config = loadConfig(home, cwd);
    store = new SessionStore(config.storage.sessionDbPath ?? sessionDbPath(home));
    let session = options.resume
      ? store.session(options.resume)
      : options.continueSession
        ? store.latest(cwd)
        : undefined;
    if (options.resume && !session) throw new ConfigError(`Session not found: ${options.resume}`);
    const history = session ? store.messages(session.id) : [];
    const lastModel = [...history].reverse().find((m) => m.role === 'assistant' && m.providerID && m.modelID);
    const model = resolveModel(
      config,
      io.env,
      home,
      lastModel ? `${lastModel.providerID}/${lastModel.modelID}` : undefined,
    );
    traceKnown = true;
    const resumed = session !== undefined;
    if (!session) {
      const now = Date.now();
      session = {
        id: `sess_${randomBytes(12).toString('hex')}`,
        directory: session === undefined ? cwd : cwd,
        title: options.prompt.split('\n')[0]?.trim().slice(0, 50) ?? '',
        timeCreated: now,
        timeUpdated: now,
      };
      store.create(session);
    }
    events.sessionId = session.id;
    const workDir = session.directory;

    const { plugins, diagnostics } = config.plugins.enabled
      ? loadPlugins({
          dirs: config.plugins.dirs,
          enabledPlugins: config.plugins.enabledPlugins,
          options: config.plugins.options,
          home,
          cwd: workDir,
          env: io.env,
        })
      : { plugins: [] as LoadedPlugin[], diagnostics: [] };
    const mcp = await connectMcp(plugins, diagnostics);
    closeMcp = mcp.close;
    for (const d of diagnostics)
      io.stderr(
        `- [${d.severity}]${d.pluginId ? ` ${d.pluginId}` : ''} ${d.code}: ${d.message}${d.path ? ` (${d.path})` : ''}\n`,
      );

    const disallowed = new Set([...config.disallowedTools, ...options.disallowedTools]);
    const tools = new Map<string, Tool>();
    // `--disallowedTools` keeps a built-in out of the registry (core/src/tool/handlers/index.ts).
    for (const t of BUILTIN_TOOLS)
      if (!disallowed.has(t.name)) tools.set(t.name, { kind: 'builtin', tool: t });
    for (const t of mcp.tools) tools.set(t.name, { kind: 'mcp', tool: t });
    const offered: OfferedTool[] = [...tools.values()].map((t) =>
      t.kind === 'builtin'
        ? { name: t.tool.name, description: t.tool.description, input_schema: t.tool.inputSchema }
        : { name: t.tool.name, description: t.tool.description, input_schema: t.tool.inputSchema },
    );

    events.emit(resumed ? 'session.resumed' : 'session.created', {
      sessionId: session.id,
      directory: workDir,
    });
    if (!resumed)
      events.emit('session.titleUpdated', { title: session.title, previousTitle: '', source: 'first_input' });
    const turnId = `turn_${randomUUID()}`;
    const hookBase = { sessionId: session.id, turnId, traceId, cwd: workDir, mode: options.mode };
    await runHooks(plugins, {
      ...hookBase,
      hookEventName: 'SessionStart',
      timestamp: Date.now(),
      source: resumed ? 'resume' : 'startup',
    });

    const userMessageId = `msg_${randomUUID()}`;
    events.emit(
      'turn.started',
      {
        turnNumber: history.filter((m) => m.role === 'user').length + 1,
        input: options.prompt,
        messageId: userMessageId,
      },
      turnId,
    );
    store.append(session.id, userMessageId, {
      role: 'user',
      parts: [{ type: 'text', text: options.prompt }],
    });
    events.emit('message.upserted', { messageId: userMessageId, role: 'user' }, turnId);

    const conversation = [
      ...historyOf(history),
      { role: 'user' as const, content: [{ type: 'text' as const, text: options.prompt }] },
    ];
    const readFiles = new Set<string>();
    const usage = { inputTokens: 0, outputTokens: 0 };
    let response = '';
    let toolCallCount = 0;
    for (let i = 0; i < MAX_MODEL_REQUESTS; i++) {
      const assistantMessageId = `msg_${randomUUID()}`;
      const answer = await askModel(
        model,
        { system: SYSTEM_PROMPT, messages: conversation, tools: offered },
        (delta) => events.emit('model.streaming', { kind: 'text_delta', delta, assistantMessageId }, turnId),
        io.signal,
      );
      usage.inputTokens += answer.usage.inputTokens;
      usage.outputTokens += answer.usage.outputTokens;
      conversation.push({ role: 'assistant', content: answer.content });
      const calls = answer.content.filter(
        (b): b is Extract<Block, { type: 'tool_use' }> => b.type === 'tool_use',
      );
      const parts: StoredPart[] = answer.content.flatMap((b) =>
        b.type === 'text' ? [{ type: 'text', text: b.text } as StoredPart] : [],
      );
      response = textOf(answer.content);
      if (calls.length === 0) {
        store.append(session.id, assistantMessageId, {
          role: 'assistant',
          providerID: model.providerId,
          modelID: model.modelId,
          parts,
        });
        events.emit('message.upserted', { messageId: assistantMessageId, role: 'assistant' }, turnId);
        break;
      }
      const results: Block[] = [];
      let ok = 0;
      for (const call of calls) {
        toolCallCount += 1;
        const out = await runToolCall(call, tools, disallowed, plugins, {
          ...hookBase,
          readFiles,
          events,
          io,
          turnId,
        });
        if (!out.isError) ok += 1;
        results.push({ type: 'tool_result', tool_use_id: call.id, content: out.text, is_error: out.isError });
        parts.push({
          type: 'tool',
          callID: call.id,
          tool: call.name,
          input: call.input,
          output: out.text,
          isError: out.isError,
        });
      }
      events.emit('tool.updated', { kind: 'batch', successCount: ok, errorCount: calls.length - ok }, turnId);
      store.append(session.id, assistantMessageId, {
        role: 'assistant',
        providerID: model.providerId,
        modelID: model.modelId,
        parts,
      });
      events.emit('message.upserted', { messageId: assistantMessageId, role: 'assistant' }, turnId);
      conversation.push({ role: 'user', content: results });
    }
    const usageOut = {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      totalTokens: usage.inputTokens + usage.outputTokens,
    };
    events.emit(
      'turn.completed',
      { response, resultType: 'success', usage: usageOut, toolCallCount },
      turnId,
    );
    const summary = {
      sessionId: session.id,
      traceId,
      turnId,
      response,
      usage: usageOut,
      eventCount: events.count,
      projection: {
        status: 'idle',
        turnCount: history.filter((m) => m.role === 'user').length + 1,
        totalTokenCount: usageOut.totalTokens,
        contextUsed: null,
        contextWindow: null,
      },
    };
    if (options.outputFormat === 'stream-json')
      io.stdout(`${JSON.stringify({ type: 'result', ...summary })}\n`);
    else if (options.outputFormat === 'json') io.stdout(`${JSON.stringify(summary, null, 2)}\n`);
    else io.stdout(`${response}\n`);
    return 0;
  } catch (err) {
    let message = err instanceof Error ? err.message : String(err);
    if (err instanceof ModelError) {
      events.emit('turn.failed', {
        error: { message: err.message, code: err.code, retryable: err.retryable, attribution: 'provider' },
      });
      message = 'Turn execution failed';
    }
    io.stderr(`Error: ${message}${traceKnown ? ` (traceId: ${traceId})` : ''}\n`);
    if (options.verbose && err instanceof ModelError) io.stderr(`Cause: ${err.message}\n`);
    return 1;
  } finally {
    await closeMcp?.();
    store?.close();
  }
}

interface CallContext {
  sessionId: string;
  turnId: string;
  traceId: string;
  cwd: string;
  mode: CollaborationMode;
  readFiles: Set<string>;
  events: EventStream;
  io: PromptIo;
}

async function runToolCall(
  call: Extract<Block, { type: 'tool_use' }>,
  tools: ReadonlyMap<string, Tool>,
  disallowed: ReadonlySet<string>,
  plugins: readonly LoadedPlugin[],
  ctx: CallContext,
): Promise<ToolOutput> {
  const { events, turnId } = ctx;
  const base = { toolCallId: call.id, toolName: call.name };
  events.emit('tool.updated', { kind: 'scheduled', ...base, input: call.input }, turnId);
  const fail = (message: string, type: string): ToolOutput => {
    events.emit('tool.updated', { kind: 'error', ...base, error: { type, message } }, turnId);
    return { text: message, isError: true };
  };
  const tool = tools.get(call.name);
  if (!tool)
    return fail(
      `<tool_use_error>Error: No such tool available: ${call.name}</tool_use_error>`,
      'tool_not_found',
    );
  const capability = tool.kind === 'builtin' ? tool.tool.capability : tool.tool.capability;
  const hookInput = {
    sessionId: ctx.sessionId,
    turnId,
    traceId: ctx.traceId,
    cwd: ctx.cwd,
    mode: ctx.mode,
    toolName: call.name,
    toolCallId: call.id,
    riskLevel: capability.riskLevel,
    sideEffectScope: capability.sideEffectScope,
  };
  const pre = await runHooks(plugins, {
    ...hookInput,
    hookEventName: 'PreToolUse',
    timestamp: Date.now(),
    toolInput: call.input,
  });
  if (pre.permissionBehavior === 'deny')
    return fail(pre.reason ?? 'Blocked by PreToolUse hook', 'permission_denied');
  const input = pre.updatedInput ?? call.input;
  const decision = applyPreToolDecision(
    checkPermission(call.name, capability, ctx.mode, disallowed),
    pre.permissionBehavior,
    pre.reason,
  );
  if (decision.decision === 'deny') {
    events.emit('permission.resolved', { ...base, decision: 'deny', reason: decision.reason }, turnId);
    return fail(decision.reason, 'permission_denied');
  }
  let runInput = input;
  if (decision.decision === 'ask') {
    const requestId = `perm_${randomUUID()}`;
    events.emit(
      'permission.requested',
      { requestId, ...base, input, riskLevel: capability.riskLevel, reason: decision.reason },
      turnId,
    );
    const answer = await respond(
      plugins,
      {
        ...hookInput,
        hookEventName: 'PermissionRequest',
        timestamp: Date.now(),
        toolInput: input,
        reason: decision.reason,
        requestId,
      },
      ctx.io.env,
    );
    events.emit(
      'permission.resolved',
      { requestId, ...base, decision: answer.behavior, reason: answer.message ?? '' },
      turnId,
    );
    if (answer.behavior === 'deny') return fail(answer.message || 'Permission denied', 'permission_denied');
    runInput = answer.updatedInput ?? input;
  }
  events.emit('tool.updated', { kind: 'started', ...base, startedAt: Date.now() }, turnId);
  try {
    const out =
      tool.kind === 'builtin'
        ? await tool.tool.run(runInput, {
            cwd: ctx.cwd,
            env: ctx.io.env,
            signal: ctx.io.signal,
            readFiles: ctx.readFiles,
          })
        : await tool.tool.call(runInput, ctx.io.signal);
    if (out.isError) return fail(out.text, 'tool_execution_failed');
    events.emit(
      'tool.updated',
      { kind: 'result', ...base, result: { success: true, content: out.text } },
      turnId,
    );
    return out;
  } catch (err) {
    return fail((err as Error).message, 'tool_execution_failed');
  }
}

/** The responders of an ask (see the module comment, step 3). */
type Answer = NonNullable<HookRunResult['permissionRequest']>;

async function respond(
  plugins: readonly LoadedPlugin[],
  input: Parameters<typeof runHooks>[1],
  env: NodeJS.ProcessEnv,
): Promise<Answer> {
  const client = env.ZCODE_STANDIN_PERMISSION_CLIENT ?? 'deny-broker';
  const noClient: Answer = {
    behavior: 'deny',
    message: `No permission client configured for ${input.toolName}`,
  };
  if (client === 'person-allows' || client === 'person-denies') {
    const hooks = await runHooks(plugins, input);
    if (hooks.permissionRequest) return hooks.permissionRequest;
    return client === 'person-allows'
      ? { behavior: 'allow' }
      : { behavior: 'deny', message: 'The user denied this tool call at the ZCode prompt' };
  }
  // The race: the broker starts first and answers at once; the hooks are aborted as the loser.
  const loser = new AbortController();
  const broker: Promise<Answer> = Promise.resolve(noClient);
  const hooks = runHooks(plugins, input, loser.signal).then((r) => r.permissionRequest);
  const first = await Promise.race([broker, hooks.then((h): Promise<Answer> | Answer => h ?? broker)]);
  loser.abort();
  await hooks.catch(() => undefined);
  return first;
}
