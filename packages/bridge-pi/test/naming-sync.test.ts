/**
 * Naming sync (SPEC B-11) on the real stack: a Gateway child process, the scripted model as pi's
 * provider and the `agentmail-pi` daemon. Between two turns the mail session's pi session gets a
 * name (a `session_info` entry, as pi's `/name` writes it); after the next turn the Gateway
 * session carries it as title and alias, and a further turn does not sync again.
 */
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aliasBase } from '@agentmail/shared-policy';
import { answerAtOnce, marker, startConformanceStack } from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { piAdapter, removeBundle } from '../harness/pi-adapter.js';
import { mailSessionFile } from '../src/session-files.js';

afterAll(removeBundle);

/** The daemon's JSON log lines (stderr) with message `msg`. */
function logged(lines: readonly string[], msg: string): Array<Record<string, unknown>> {
  return lines.flatMap((line) => {
    if (!line.startsWith('[stderr] {')) return [];
    try {
      const entry = JSON.parse(line.slice('[stderr] '.length)) as Record<string, unknown>;
      return entry.msg === msg ? [entry] : [];
    } catch {
      return [];
    }
  });
}

describe('bridge-pi naming sync (B-11)', () => {
  it('a pi session name becomes the Gateway alias and title once; the next turn does not sync again', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('naming');
    stack.model.addScenarios([
      answerAtOnce(`${task}-one`, 'First done.'),
      answerAtOnce(`${task}-two`, 'Second done.'),
      answerAtOnce(`${task}-three`, 'Third done.'),
    ]);
    const bridge = await stack.startBridge(piAdapter);

    const first = await stack.sendAs(undefined, stack.taskAddress(), {
      subject: `Start ${task}-one`,
      body: 'Go.',
    });
    await stack.awaitReply({ inReplyTo: first.mail_id, from: stack.agent.name });
    expect(logged(bridge.lines(), 'naming synced'), 'an unnamed pi session is not synced').toEqual([]);

    // A rename in pi between turns: a session_info entry on the leaf, as `/name` appends it.
    const file = mailSessionFile(join(stack.bridgeStateDir, 'pi-data'), first.session_id);
    const entries = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
    const leaf = JSON.parse(entries.at(-1) ?? '{}') as { id?: string };
    const name = `Quarterly report ${task}`;
    await appendFile(
      file,
      `${JSON.stringify({ type: 'session_info', id: 'ren4m3d1', parentId: leaf.id ?? null, timestamp: new Date().toISOString(), name })}\n`,
    );

    const second = await stack.sendAs(undefined, first.address, { subject: `More ${task}-two`, body: 'Go.' });
    await stack.awaitReply({ inReplyTo: second.mail_id, from: stack.agent.name });
    const alias = aliasBase(stack.agent.name, name);
    expect(alias).not.toBe(first.session_alias);
    expect(logged(bridge.lines(), 'naming synced').map((l) => [l.alias, l.title])).toEqual([[alias, name]]);
    const thread = await stack.thread(second.mail_id);
    expect(thread.at(-1)?.session_alias, 'the Gateway session carries the new alias').toBe(alias);

    // Addressed by the new alias: the same session; its turn finds the fingerprint and skips.
    const third = await stack.sendAs(undefined, stack.taskAddress(alias), {
      subject: `Again ${task}-three`,
      body: 'Go.',
    });
    expect(third.session_id).toBe(first.session_id);
    await stack.awaitReply({ inReplyTo: third.mail_id, from: stack.agent.name });
    expect(logged(bridge.lines(), 'naming synced'), 'no second sync').toHaveLength(1);
    expect(logged(bridge.lines(), 'naming sync skipped').map((l) => l.reason)).toEqual(['unchanged']);
  });
});
