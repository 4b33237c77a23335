import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasErrorCode } from '@agentmail/shared-policy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExplicitSendRecord } from '../src/explicit-sends.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'am-sends-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ExplicitSendRecord (B-10)', () => {
  it('records the targets mailed during a turn, per turn, de-duplicated', async () => {
    const sends = new ExplicitSendRecord();
    await sends.record('t1', 'ann@/srv/app.s1');
    await sends.record('t1', ['bob@/srv/app.s1', 'ann@/srv/app.s1', '  ']);
    await sends.record('t2', 'carl');
    expect(await sends.targetsFor('t1')).toEqual(['ann@/srv/app.s1', 'bob@/srv/app.s1']);
    expect(await sends.targetsFor('t2')).toEqual(['carl']);
    expect(await sends.targetsFor('t3')).toEqual([]);
  });

  it('another process writes, the driver reads (two records on one file)', async () => {
    const file = join(dir, 'run', 'sends.jsonl');
    const toolServer = new ExplicitSendRecord({ file });
    const driver = new ExplicitSendRecord({ file });
    expect(await driver.targetsFor('t1')).toEqual([]); // no file yet
    await toolServer.record('t1', 'ann@/srv/app.s1');
    await toolServer.record('t2', 'bob');
    expect(await driver.targetsFor('t1')).toEqual(['ann@/srv/app.s1']);
    expect(await driver.targetsFor('t2')).toEqual(['bob']);
  });

  it('ignores a torn or foreign line', async () => {
    const file = join(dir, 'sends.jsonl');
    const rec = new ExplicitSendRecord({ file });
    await rec.record('t1', 'ann');
    await appendFile(file, 'garbage\n{"turn_id":"t1","to":[1,"bob"]}\n{"turn_id":"t1","to":["car');
    expect(await new ExplicitSendRecord({ file }).targetsFor('t1')).toEqual(['ann', 'bob']);
  });

  it('appends one JSON line per record', async () => {
    const file = join(dir, 'sends.jsonl');
    const rec = new ExplicitSendRecord({ file });
    await Promise.all(['a', 'b', 'c'].map((t) => rec.record('t1', t)));
    const { readFile } = await import('node:fs/promises');
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(JSON.parse(l)).toMatchObject({ turn_id: 't1', to: [expect.any(String)] });
  });

  it('forget() drops the in-memory record only', async () => {
    const mem = new ExplicitSendRecord();
    await mem.record('t1', 'ann');
    mem.forget('t1');
    expect(await mem.targetsFor('t1')).toEqual([]);
  });

  it('refuses a relative file and reports an unwritable one', async () => {
    try {
      new ExplicitSendRecord({ file: 'sends.jsonl' });
      expect.unreachable('should throw');
    } catch (e) {
      expect(hasErrorCode(e, 'AM_STATE_FILE_RELATIVE')).toBe(true);
    }
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir, 'blocker'), 'x');
    const rec = new ExplicitSendRecord({ file: join(dir, 'blocker', 'sends.jsonl') });
    await expect(rec.record('t1', 'ann')).rejects.toSatisfy((e) =>
      hasErrorCode(e, 'AM_SEND_RECORD_WRITE_FAILED'),
    );
    expect(await rec.targetsFor('t1')).toEqual(['ann']);
  });
});
