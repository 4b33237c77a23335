/**
 * Naming sync (SPEC B-11) on the real stack: a Gateway child process, the scripted model as pi's
 * provider and the `agentmail-pi` daemon. A new mail session's pi session is named after the mail
 * subject (the Gateway made the alias from it, G-5) and that name is not synced back. Between two
 * turns the pi session gets another name (a `session_info` entry, as pi's `/name` writes it); after
 * the next turn the Gateway session carries it as title and alias, and a further turn does not
 * sync again. A session adopted from the person's own pi is never renamed nor synced.
 */

import { randomUUID } from 'node:crypto';
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SessionBindings } from '@agentmail/bridge-kit';
import { aliasBase, namingFingerprint } from '@agentmail/shared-policy';
import { answerAtOnce, marker, startConformanceStack } from '@agentmail/testkit/conformance';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { writePiSession } from '../bench/pi-session-file.js';
import { piAdapter, removeBundle } from '../harness/pi-adapter.js';

import { mailSessionFile } from '../src/session-files.js';

/** One step of the test: a pi worker's start alone takes seconds, tens of seconds on a loaded machine (the adapter's step budget). */
const STEP_MS = piAdapter.stepTimeoutMs ?? 60_000;

afterAll(removeBundle);

/** The `session_info` names of a pi session file, in file order. */
async function piSessionNames(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type?: string; name?: string })
    .filter((entry) => entry.type === 'session_info')
    .map((entry) => entry.name ?? '');
}

describe('bridge-pi naming sync (B-11)', () => {
  it('a new pi session is named after the subject without a sync back; a later pi name becomes the Gateway alias and title once; an adopted session is never renamed', async ({
    signal,
  }) => {
    const stack = await startConformanceStack(piAdapter, { signal });
    onTestFinished(() => stack.close());
    const task = marker('naming');
    stack.model.addScenarios([
      answerAtOnce(`${task}-one`, 'First done.'),
      answerAtOnce(`${task}-two`, 'Second done.'),
      answerAtOnce(`${task}-three`, 'Third done.'),
      answerAtOnce(`${task}-adopted`, 'Adopted done.'),
    ]);
    // A session of the person's own pi, there before the daemon's first heartbeat reports it.
    const own = await writePiSession(join(stack.bridgeStateDir, 'pi-agent'), {
      id: randomUUID(),
      cwd: stack.workdir,
      targetBytes: 2_000,
      provider: stack.modelProvider,
      model: 'scripted-model',
    });
    const ownId = JSON.parse((await readFile(own.path, 'utf8')).split('\n')[0] ?? '{}') as { id: string };
    const bridge = await stack.startBridge(piAdapter);

    const subject = `Start ${task}-one`;
    const first = await stack.sendAs(undefined, stack.taskAddress(), { subject, body: 'Go.' });
    await stack.awaitReply({ inReplyTo: first.mail_id, from: stack.agent.name, timeoutMs: STEP_MS });
    // Gateway → pi: the new pi session carries the subject; the turn does not sync it back.
    const file = mailSessionFile(join(stack.bridgeStateDir, 'pi-data'), first.session_id);
    expect(await piSessionNames(file), 'the new pi session is named after the subject').toEqual([subject]);
    const baseline = await new SessionBindings(join(stack.bridgeStateDir, 'pi-data')).get(first.session_id);
    expect(baseline?.naming?.fingerprint, 'the given name is the naming baseline').toBe(
      namingFingerprint(subject),
    );
    expect(bridge.bridgeEvents('naming_synced'), 'the name we gave is not synced back').toEqual([]);
    expect(bridge.bridgeEvents('naming_sync_skipped').map((l) => l.reason)).toEqual(['unchanged']);
    expect((await stack.thread(first.mail_id)).at(-1)?.session_alias).toBe(first.session_alias);

    // An adopted session (the person's own pi session, by its id): never renamed, never synced.
    const adopted = await stack.sendAs(undefined, stack.taskAddress(ownId.id), {
      subject: `Adopt ${task}-adopted`,
      body: 'Go.',
    });
    await stack.awaitReply({ inReplyTo: adopted.mail_id, from: stack.agent.name, timeoutMs: STEP_MS });
    expect(await piSessionNames(own.path), 'the adopted pi session keeps having no name').toEqual([]);
    expect(
      (await readFile(own.path, 'utf8')).length,
      'the adopted session file got the turn (it was really used)',
    ).toBeGreaterThan(own.bytes);
    expect(bridge.bridgeEvents('naming_synced')).toEqual([]);

    // A rename in pi between turns: a session_info entry on the leaf, as `/name` appends it.
    const entries = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
    const leaf = JSON.parse(entries.at(-1) ?? '{}') as { id?: string };
    const name = `Quarterly report ${task}`;
    await appendFile(
      file,
      `${JSON.stringify({ type: 'session_info', id: 'ren4m3d1', parentId: leaf.id ?? null, timestamp: new Date().toISOString(), name })}\n`,
    );

    const second = await stack.sendAs(undefined, first.address, { subject: `More ${task}-two`, body: 'Go.' });
    await stack.awaitReply({ inReplyTo: second.mail_id, from: stack.agent.name, timeoutMs: STEP_MS });
    const alias = aliasBase(stack.agent.name, name);
    expect(alias).not.toBe(first.session_alias);
    expect(bridge.bridgeEvents('naming_synced').map((l) => [l.alias, l.title])).toEqual([[alias, name]]);
    const thread = await stack.thread(second.mail_id);
    expect(thread.at(-1)?.session_alias, 'the Gateway session carries the new alias').toBe(alias);

    // Addressed by the new alias: the same session; its turn finds the fingerprint and skips.
    const third = await stack.sendAs(undefined, stack.taskAddress(alias), {
      subject: `Again ${task}-three`,
      body: 'Go.',
    });
    expect(third.session_id).toBe(first.session_id);
    await stack.awaitReply({ inReplyTo: third.mail_id, from: stack.agent.name, timeoutMs: STEP_MS });
    expect(bridge.bridgeEvents('naming_synced'), 'no second sync').toHaveLength(1);
    expect(bridge.bridgeEvents('naming_sync_skipped').map((l) => l.reason)).toEqual([
      'unchanged',
      'adopted',
      'unchanged',
    ]);
  }, 240_000);
});
