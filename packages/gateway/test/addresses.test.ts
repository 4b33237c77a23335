/**
 * Regression: paths in addresses were taken as written, so `pi@/x/../../etc.new` and
 * `pi@//x//y.new` reached sessions in directories spelt differently from the real one. A
 * non-normalised path is a 400 naming the address, with the normalised address as suggestion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgent, addUser, api, startGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
let pi: string;
let alice: string;
beforeAll(async () => {
  gw = await startGateway();
  pi = await addAgent(gw, 'pi');
  alice = await addUser(gw, 'alice');
});
afterAll(async () => {
  await gw.close();
});

const sessionCount = async () =>
  (await gw.app.gateway.db.selectFrom('sessions').select('id').execute()).length;

describe('paths in addresses must be normalised (SPEC G-3)', () => {
  it.each([
    ['pi@/x/../../etc.new', 'pi@/etc.new'],
    ['pi@//x//y.new', 'pi@/x/y.new'],
    ['pi@/srv/app/.', 'pi@/srv/app.'],
    ['pi@/srv/./app.', 'pi@/srv/app.'],
  ])('%s is a 400 suggesting %s; nothing is created', async (to, normal) => {
    const before = await sessionCount();
    const r = await api(gw, 'POST', '/me/mail/send', alice, { to, subject: 's', body: 'b' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('AM_GW_BAD_REQUEST');
    expect(r.body.field).toBe('to');
    expect(String(r.body.detail)).toContain(JSON.stringify(to));
    expect(String(r.body.detail)).toContain('not normalised');
    expect(r.body.suggestion).toBe(`write ${normal}`);
    expect(r.body.normalized_address).toBe(normal);
    expect(await sessionCount()).toBe(before);
  });

  it('the check names the field in cc and on the agent route too', async () => {
    const r = await api(gw, 'POST', '/mail/send', pi, {
      to: 'alice',
      cc: ['pi@/a//b.'],
      subject: 's',
      body: 'b',
    });
    expect(r.status).toBe(400);
    expect(r.body.field).toBe('cc[0]');
    expect(r.body.suggestion).toBe('write pi@/a/b.');
  });

  it('normalised paths, the root and names with dots pass', async () => {
    for (const to of ['pi@/etc.new', 'pi@/.', 'pi@/srv/app.v2.', 'pi@/srv/.../x.']) {
      const r = await api(gw, 'POST', '/me/mail/send', alice, { to, subject: 's', body: 'b' });
      expect(r.status, `${to}: ${JSON.stringify(r.body)}`).toBe(200);
    }
  });
});

describe('an alias names one session in one directory (SPEC G-2)', () => {
  it('regression: an alias under another path is refused naming its real address, never delivered there', async () => {
    const made = await api<{ session_alias: string; session_id: string }>(
      gw,
      'POST',
      '/me/mail/send',
      alice,
      {
        to: 'pi@/tmp/a b.new',
        subject: 'echo x',
        body: 'b',
      },
    );
    expect(made.status).toBe(200);
    const alias = made.body.session_alias;
    const before = await gw.app.gateway.db.selectFrom('deliveries').select('mail_id').execute();
    const r = await api(gw, 'POST', '/me/mail/send', alice, {
      to: `pi@/tmp/x.${alias}`,
      subject: 's',
      body: 'b',
    });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('AM_GW_ALIAS_ELSEWHERE');
    expect(r.body.session_address).toBe(`pi@/tmp/a b.${alias}`);
    expect(String(r.body.detail)).toContain('/tmp/a b');
    expect(String(r.body.suggestion)).toContain(`pi@/tmp/a b.${alias}`);
    expect(await gw.app.gateway.db.selectFrom('deliveries').select('mail_id').execute()).toHaveLength(
      before.length,
    );
    // The same alias with its own path, or with no path at all, reaches the session.
    for (const to of [`pi@/tmp/a b.${alias}`, `pi@.${alias}`]) {
      const ok = await api<{ session_id: string }>(gw, 'POST', '/me/mail/send', alice, {
        to,
        subject: 's',
        body: 'b',
      });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.session_id).toBe(made.body.session_id);
    }
  });
});
