import { describe, expect, it } from 'vitest';
import { buildQuestionMail, mapQuestionAnswers, type Question } from '../src/questions.js';

const tone: Question = {
  header: 'Tone',
  question: 'Which tone should the release notes use?',
  options: [{ label: 'formal', description: 'for customers' }, { label: 'casual' }],
};
const targets: Question = {
  question: 'Which targets?',
  options: [{ label: 'linux' }, { label: 'mac' }, { label: 'formal' }],
  multiSelect: true,
};
const free: Question = { question: 'Anything else?' };

describe('buildQuestionMail (P-9)', () => {
  it('one question with options: its labels, single choice', () => {
    const mail = buildQuestionMail([tone]);
    expect(mail).toMatchObject({ kind: 'question', options: ['formal', 'casual'], multi_select: false });
    expect(mail.question).toContain('Tone: Which tone should the release notes use?');
    expect(mail.question).toContain('- formal — for customers');
    expect(mail.question).toContain('Answer with one of the options.');
  });

  it('options are the union of all questions, de-duplicated', () => {
    const mail = buildQuestionMail([tone, targets]);
    expect(mail.options).toEqual(['formal', 'casual', 'linux', 'mac']);
    expect(mail.multi_select).toBe(true);
    expect(mail.question).toMatch(/^1\. Tone:/);
    expect(mail.question).toContain('2. Which targets?');
  });

  it('a question without options is free text: no options at all, never approve/deny', () => {
    const mail = buildQuestionMail([free]);
    expect(mail.options).toEqual([]);
    expect(mail.multi_select).toBe(false);
    expect(mail.kind).toBe('question');
    expect(mail.question).toContain('Answer in your own words.');
    expect(mail.options.join(' ')).not.toMatch(/approve|deny/i);
    expect(buildQuestionMail([{ question: 'x', options: [] }]).options).toEqual([]);
  });

  it('mixed questions keep only the real options and say how to answer the free ones', () => {
    const mail = buildQuestionMail([tone, free]);
    expect(mail.options).toEqual(['formal', 'casual']);
    expect(mail.question).toContain('(answer in your own words)');
    expect(mail.question).toContain('For the questions without options');
  });

  it('drops empty labels and is localised', () => {
    const mail = buildQuestionMail(
      [{ question: '选哪个？', options: [{ label: ' a ' }, { label: '  ' }] }],
      'zh-CN',
    );
    expect(mail.options).toEqual(['a']);
    expect(mail.question).toContain('请从选项中选择一个作答。');
  });
});

describe('mapQuestionAnswers (P-9)', () => {
  it('maps chosen labels back to each question by label', () => {
    const r = mapQuestionAnswers([tone, targets], {
      decision: 'answered',
      answers: ['casual', 'linux', 'mac'],
    });
    expect(r.declined).toBe(false);
    expect(r.answers).toEqual([
      { header: 'Tone', question: tone.question, selected: ['casual'] },
      { question: targets.question, selected: ['linux', 'mac'] },
    ]);
  });

  it('a label shared by several questions answers each of them; single choice keeps one', () => {
    const r = mapQuestionAnswers([tone, targets], { answers: ['formal', 'casual'] });
    expect(r.answers[0]?.selected).toEqual(['formal']);
    expect(r.answers[1]?.selected).toEqual(['formal']);
  });

  it('matches labels ignoring surrounding space and case', () => {
    const r = mapQuestionAnswers([tone], { answers: [' Casual '] });
    expect(r.answers[0]?.selected).toEqual(['casual']);
  });

  it('free text answers free-text questions and option questions left unanswered', () => {
    const r = mapQuestionAnswers([tone, free], {
      decision: 'answered',
      answers: ['formal', 'ship on friday'],
    });
    expect(r.answers[0]).toEqual({ header: 'Tone', question: tone.question, selected: ['formal'] });
    expect(r.answers[1]).toEqual({ question: free.question, selected: [], text: 'ship on friday' });
    const onlyText = mapQuestionAnswers([tone], { answers: ['something in between'] });
    expect(onlyText.answers[0]).toMatchObject({ selected: [], text: 'something in between' });
  });

  it('extra text (the note) joins the free text', () => {
    const r = mapQuestionAnswers([free], { answers: [], text: 'see the wiki' });
    expect(r.answers[0]?.text).toBe('see the wiki');
  });

  it('deny means declined: nothing selected', () => {
    const r = mapQuestionAnswers([tone, free], { decision: 'deny', answers: ['formal'] });
    expect(r.declined).toBe(true);
    expect(r.answers.map((a) => [a.selected, a.text])).toEqual([
      [[], undefined],
      [[], undefined],
    ]);
  });
});
