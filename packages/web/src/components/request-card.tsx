/**
 * One permission or question request (SPEC G-38, P-4, P-9): the tool, its input and the working
 * directory as the agent sent them (as text), and the answers: approve once / always / deny with
 * a note; a question by its options (one or several) or in free text. A request that no longer
 * waits says so instead of pretending the answer changed anything.
 */
import type { PermissionView } from '@agentmail/protocol';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { toast } from '../bus.js';
import { explain, gatewayCode, isSignedOut } from '../errors.js';
import { href } from '../route.js';
import { t, when } from '../texts.js';

/** Lines of the context an inbox card shows beside its buttons. @default 8 */
export const COMMAND_PREVIEW_LINES = 8;
/** Characters of the context an inbox card shows beside its buttons (about 9 lines on a phone). @default 320 */
export const COMMAND_PREVIEW_CHARS = 320;

/**
 * The start of a request's context (tool and input first, as the bridges write it): what an
 * approval runs, for the card's one-tap buttons; `cut` when the context goes on.
 */
export function commandPreview(context: string): { text: string; cut: boolean } {
  const lines = context.split('\n');
  let text = lines.slice(0, COMMAND_PREVIEW_LINES).join('\n');
  if (text.length > COMMAND_PREVIEW_CHARS) text = `${text.slice(0, COMMAND_PREVIEW_CHARS)}…`;
  return { text, cut: text.length < context.length };
}

type Outcome = { kind: 'done'; text: string } | { kind: 'gone'; text: string } | undefined;

/** Props of {@link RequestCard}. */
export interface RequestCardProps {
  request: PermissionView;
  /** Called after a decision was taken (or the request turned out to be gone). */
  onDone: () => void;
  onSignedOut: () => void;
  /** Show the context folded (inbox) instead of open (requests page). @default false */
  compact?: boolean;
  focused?: boolean;
}

function CompactContext(props: { context: string }) {
  const preview = commandPreview(props.context);
  return (
    <>
      <figure class="command">
        <figcaption class="muted small">{t('web.request.command')}</figcaption>
        <pre class="context">{preview.text}</pre>
      </figure>
      {preview.cut ? (
        <details>
          <summary>{t('web.request.context')}</summary>
          <pre class="context">{props.context}</pre>
        </details>
      ) : null}
    </>
  );
}

export function RequestCard(props: RequestCardProps) {
  const r = props.request;
  const [note, setNote] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [free, setFree] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [outcome, setOutcome] = useState<Outcome>();

  const decide = async (body: { decision: 'approve' | 'always' | 'deny' } | { answers: string[] }) => {
    setBusy(true);
    setError(undefined);
    try {
      const trimmed = note.trim();
      await api.decide(r.id, trimmed === '' ? body : { ...body, note: trimmed });
      const text = 'answers' in body ? t('web.request.answered') : t(`web.request.decided.${body.decision}`);
      setOutcome({ kind: 'done', text });
      toast(text);
      props.onDone();
    } catch (err) {
      if (isSignedOut(err)) props.onSignedOut();
      const code = gatewayCode(err);
      if (code === 'AM_GW_NO_LONGER_WAITING' || code === 'AM_GW_ALREADY_DECIDED') {
        // The card stays with the reason (no reload that would take it away at once); the next
        // live event or visit drops it from the list.
        setOutcome({ kind: 'gone', text: explain(err) });
        toast(explain(err));
      } else setError(explain(err));
    } finally {
      setBusy(false);
    }
  };

  const answer = () => {
    const answers = [...chosen, ...(free.trim() === '' ? [] : [free.trim()])];
    if (answers.length === 0) {
      setError(t('web.request.pick_or_type'));
      return;
    }
    void decide({ answers });
  };

  const toggle = (label: string) => {
    if (r.multi_select) setChosen((c) => (c.includes(label) ? c.filter((x) => x !== label) : [...c, label]));
    else setChosen([label]);
  };

  const question = r.kind === 'question';
  return (
    <article
      class={`card request${props.focused ? ' focused' : ''}`}
      id={`request-${r.id}`}
      data-request-id={r.id}
      aria-label={t(question ? 'web.request.question_from' : 'web.request.approval_from', {
        agent: r.agent_name,
      })}
    >
      <header>
        <span class={`pill ${question ? 'pill-question' : 'pill-approval'}`}>
          {t(question ? 'web.request.kind.question' : 'web.request.kind.approval')}
        </span>
        <strong>{r.agent_name}</strong>
        {r.session_alias ? <span class="muted">· {r.session_alias}</span> : null}
        <span class="muted right">{when(r.created_at)}</span>
      </header>
      <p class="question">{r.question}</p>
      {r.context ? (
        question ? (
          // A question's context says who asks from where ("Asked by pi while working in …").
          <p class="muted small">{r.context}</p>
        ) : props.compact ? (
          // The inbox: what an approval runs stays in sight of "Approve once"; the rest folds.
          <CompactContext context={r.context} />
        ) : (
          <pre class="context">{r.context}</pre>
        )
      ) : null}
      {outcome ? (
        <p class={outcome.kind === 'gone' ? 'notice' : 'done'} role="status">
          {outcome.text}
        </p>
      ) : (
        <>
          {question && r.options.length > 0 ? (
            <fieldset class="options">
              <legend>{t(r.multi_select ? 'web.request.pick_several' : 'web.request.pick_one')}</legend>
              {r.options.map((o) => (
                <label key={o} class="option">
                  <input
                    type={r.multi_select ? 'checkbox' : 'radio'}
                    name={`answer-${r.id}`}
                    value={o}
                    checked={chosen.includes(o)}
                    onChange={() => toggle(o)}
                  />
                  <span>{o}</span>
                </label>
              ))}
            </fieldset>
          ) : null}
          {question ? (
            <label class="field">
              <span>{t(r.options.length > 0 ? 'web.request.other_answer' : 'web.request.your_answer')}</span>
              <textarea
                rows={2}
                value={free}
                onInput={(e) => setFree((e.target as HTMLTextAreaElement).value)}
                name={`free-${r.id}`}
              />
            </label>
          ) : null}
          <label class="field">
            <span>{t('web.request.note')}</span>
            <input
              type="text"
              value={note}
              name={`note-${r.id}`}
              onInput={(e) => setNote((e.target as HTMLInputElement).value)}
              placeholder={t('web.request.note_placeholder')}
            />
          </label>
          {error ? (
            <p class="error" role="alert">
              {error}
            </p>
          ) : null}
          <div class="actions">
            {(question
              ? ([
                  ['web.request.send_answer', 'primary', answer],
                  ['web.request.decline', 'danger', () => decide({ decision: 'deny' })],
                ] as const)
              : ([
                  ['web.request.approve', 'primary', () => decide({ decision: 'approve' })],
                  ['web.request.always', '', () => decide({ decision: 'always' })],
                  ['web.request.deny', 'danger', () => decide({ decision: 'deny' })],
                ] as const)
            ).map(([label, tone, onClick]) => (
              <button key={label} type="button" class={tone} disabled={busy} onClick={onClick}>
                {t(label)}
              </button>
            ))}
            <a class="muted small" href={href('mail', r.mail_id)}>
              {t('web.request.open_mail')}
            </a>
          </div>
        </>
      )}
    </article>
  );
}
