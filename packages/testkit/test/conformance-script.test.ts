/**
 * The conformance scenarios read the bridge's words through patterns made from shared-policy's
 * text catalogue; these tests keep those patterns in step with the catalogue and the prompt
 * builder, without running a bridge.
 */
import { aliasBase, buildTurnPrompt, formatText, planTurn, type TextKey } from '@agentmail/shared-policy';
import { describe, expect, it } from 'vitest';
import { mailIdOf, marker, textPattern, turnStart, uploadedIdOf } from '../src/conformance/index.js';
import { matchesRequest, type RecordedRequest } from '../src/index.js';

function request(
  lastUserText: string,
  toolResults: string[] = [],
  toolNames = ['read_mail'],
): RecordedRequest {
  return {
    seq: 1,
    receivedAtMs: 0,
    method: 'POST',
    path: '/v1/chat/completions',
    headers: {},
    body: undefined,
    invalid: undefined,
    model: 'scripted-model',
    stream: true,
    lastUserText,
    systemText: '',
    toolNames,
    toolResults: toolResults.map((text, i) => ({ toolCallId: `c${i}`, text })),
    scenario: undefined,
    response: { status: undefined, end: 'pending' },
  };
}

describe('conformance script helpers', () => {
  it('textPattern matches every catalogue text the scenarios look for, whatever the placeholders hold', () => {
    const samples: Array<[TextKey, Record<string, string | number>]> = [
      ['prompt.reply.to_person', { reply_address: 'alice@.pi-x' }],
      ['prompt.reply.to_agent', { reply_address: 'peer@.' }],
      ['permission.plan.denied', { tool: 'bash' }],
      ['failure.all_models_failed', { attempts: 3, timeout_s: 600 }],
      ['tools.download.done', { id: 'a_1', path: '/tmp/x y.txt', size: 12 }],
      ['tools.upload.done', { filename: 'out.txt', size: 12, id: 'a_2' }],
      [
        'tools.send.done',
        { mail_id: 'm_1', address: 'alice@.s', session_alias: 's', session_id: 's_1', rounds_left: 4 },
      ],
    ];
    for (const [key, params] of samples) expect(formatText(key, params)).toMatch(textPattern(key));
    expect('something else entirely').not.toMatch(textPattern('permission.plan.denied'));
  });

  it('mailIdOf reads the mail id from the prompt shared-policy builds (B-5)', () => {
    const mail = {
      mail_id: 'm_01JABCDEFGHJKMNPQRSTVWXYZ0',
      from_name: 'alice',
      from_human: true,
      subject: 'Task task.0a1b2c3d',
      reply_address: 'alice@.pi-task-task-0a1b2c3d',
      self_address: 'pi@/w.pi-task-task-0a1b2c3d',
      session_alias: 'pi-task-task-0a1b2c3d',
    };
    const prompt = buildTurnPrompt(planTurn({ mail, selfName: 'pi' }), mail);
    expect(mailIdOf(request(prompt))).toBe(mail.mail_id);
    expect(() => mailIdOf(request('no id here'))).toThrow(/names no mail id/);
  });

  it('uploadedIdOf reads the new attachment id from an upload result', () => {
    const text = formatText('tools.upload.done', { filename: 'out.txt', size: 3, id: 'a_01XYZ' });
    expect(uploadedIdOf(request('p', ['unrelated', text]))).toBe('a_01XYZ');
    expect(() => uploadedIdOf(request('p', ['Saved.']))).toThrow(/names an attachment id/);
  });

  it('a marker never shows up in the session alias made from a subject carrying it (G-5)', () => {
    for (let i = 0; i < 50; i++) {
      const mark = marker('task');
      expect(mark).toMatch(/^task\.[0-9a-f]{8}$/);
      expect(aliasBase('pi', `Task ${mark}`)).not.toContain(mark);
    }
  });

  it('turnStart matches the first request of a mail turn, not a title request or a tool round', () => {
    const mark = marker('t');
    expect(matchesRequest(turnStart(mark), request(`Subject: ${mark}`))).toBe(true);
    expect(matchesRequest(turnStart(mark), request(`Subject: ${mark}`, [], []))).toBe(false);
    expect(matchesRequest(turnStart(mark), request(`Subject: ${mark}`, ['result']))).toBe(false);
    expect(matchesRequest(turnStart(mark), request('Subject: other'))).toBe(false);
  });
});
