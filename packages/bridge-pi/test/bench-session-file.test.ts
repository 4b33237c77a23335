/**
 * The bench's synthetic session file (bench/pi-session-file.ts) is a session pi really opens, and
 * the one the bridge's heartbeat snapshot and adoption lookup find by its id.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionManager } from '@earendil-works/pi-coding-agent';
import { afterAll, describe, expect, it } from 'vitest';
import { writePiSession } from '../bench/pi-session-file.js';
import { findPiSessionFile, listPiSessions } from '../src/session-files.js';

const root = mkdtempSync(join(tmpdir(), 'pi-bench-session-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('bench session file', () => {
  it('opens in pi with every message in the context, and the bridge finds it by id', async () => {
    const agentDir = join(root, 'agent');
    const cwd = join(root, 'work');
    const id = randomUUID();
    const info = await writePiSession(agentDir, {
      id,
      cwd,
      targetBytes: 200_000,
      provider: 'scripted',
      model: 'scripted-model',
    });
    expect(info.bytes).toBeGreaterThanOrEqual(200_000);

    const manager = SessionManager.open(info.path, undefined, cwd);
    expect(manager.getHeader()?.id).toBe(id);
    expect(manager.getEntries()).toHaveLength(info.entries);
    const context = manager.buildSessionContext();
    expect(context.messages).toHaveLength(info.messages);
    expect(context.model).toEqual({ provider: 'scripted', modelId: 'scripted-model' });
    expect(manager.getLeafId(), 'the leaf is the last entry').toBe(
      info.entries.toString(16).padStart(8, '0'),
    );

    expect(await listPiSessions(agentDir)).toEqual([expect.objectContaining({ platform_id: id, path: cwd })]);
    expect(await findPiSessionFile(agentDir, id)).toBe(info.path);
  });
});
