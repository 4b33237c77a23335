/**
 * Write a mail: a new task (`pi@/path.new`), a reply (to the mail's reply address, in its thread)
 * or a forward (quoting the mail and its attachments). Addresses complete from the Gateway's
 * suggestions and are checked before sending, naming the field; attachments upload as they are
 * chosen and go with the mail.
 */
import type { AttachmentInfo, PermissionMode } from '@agentmail/protocol';
import { parseAddress } from '@agentmail/protocol';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { toast } from '../bus.js';
import { AddressInput } from '../components/address-input.js';
import { explain, isSignedOut } from '../errors.js';
import { go, href } from '../route.js';
import { bytes, t } from '../texts.js';

/**
 * Why an address does not parse, from the grammar's own message without what is meant for API
 * clients: the repeated address and the rule id.
 */
function addressReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message
    .replace(/^address "[^"]*": /, '')
    .replace(/\s*\(see SPEC [^)]*\)/g, '')
    .trim();
}

/** The first problem of an address field, in the page's words, or undefined. */
export function addressProblem(field: string, value: string, required: boolean): string | undefined {
  const list = value
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  if (list.length === 0) return required ? t('web.compose.error.empty', { field }) : undefined;
  for (const a of list) {
    try {
      parseAddress(a);
    } catch (err) {
      return t('web.compose.error.address', {
        field,
        address: a,
        reason: addressReason(err),
      });
    }
  }
  return undefined;
}

function addresses(value: string): string[] {
  return value
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
}

export function ComposePage(props: { query: URLSearchParams; onSignedOut: () => void }) {
  const replyId = props.query.get('reply') ?? undefined;
  const forwardId = props.query.get('forward') ?? undefined;
  const [to, setTo] = useState(props.query.get('to') ?? '');
  const [cc, setCc] = useState('');
  const [subject, setSubject] = useState('');
  const [body, setBody] = useState('');
  // undefined: keep the session's mode (workspace for a new one); sent only when the person chose
  // one, since a mode on an existing session changes it (its owner) or is refused (anyone else).
  const [mode, setMode] = useState<PermissionMode | undefined>();
  const [files, setFiles] = useState<AttachmentInfo[]>([]);
  const [uploading, setUploading] = useState(0);
  const [errors, setErrors] = useState<{ to?: string; cc?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);
  const [original, setOriginal] = useState<string | undefined>();

  useEffect(() => {
    const id = replyId ?? forwardId;
    if (id === undefined) return;
    api.mail(id).then(
      ({ mail }) => {
        setOriginal(mail.subject);
        if (replyId !== undefined) {
          setTo(mail.reply_address);
          setSubject(
            /^re:/i.test(mail.subject) ? mail.subject : t('web.compose.re', { subject: mail.subject }),
          );
        }
      },
      (err: unknown) => {
        if (isSignedOut(err)) props.onSignedOut();
        setErrors({ form: explain(err) });
      },
    );
  }, [replyId, forwardId]);

  const upload = async (list: FileList | null) => {
    for (const file of Array.from(list ?? [])) {
      setUploading((n) => n + 1);
      try {
        const { attachment } = await api.upload(file, file.name);
        setFiles((f) => [...f, attachment]);
      } catch (err) {
        if (isSignedOut(err)) props.onSignedOut();
        setErrors((e) => ({
          ...e,
          form: t('web.compose.error.upload', { file: file.name, reason: explain(err) }),
        }));
      } finally {
        setUploading((n) => n - 1);
      }
    }
  };

  const send = async (e: Event) => {
    e.preventDefault();
    const problems: { to?: string | undefined; cc?: string | undefined; form?: string } = {
      to: addressProblem(t('web.compose.to'), to, true),
      cc: forwardId === undefined ? addressProblem(t('web.compose.cc'), cc, false) : undefined,
    };
    if (forwardId === undefined && subject.trim() === '' && body.trim() === '')
      problems.form = t('web.compose.error.nothing');
    if (addresses(to).length > 1) problems.to = t('web.compose.error.one_to');
    setErrors(problems as { to?: string; cc?: string; form?: string });
    if (Object.values(problems).some((p) => p !== undefined)) return;
    setBusy(true);
    try {
      const sent =
        forwardId !== undefined
          ? await api.forward(forwardId, to.trim(), body.trim() === '' ? undefined : body)
          : await api.send({
              to: to.trim(),
              subject,
              body,
              ...(addresses(cc).length > 0 ? { cc: addresses(cc) } : {}),
              ...(replyId === undefined ? {} : { reply_to: replyId }),
              ...(files.length > 0 ? { attachment_ids: files.map((f) => f.id) } : {}),
              ...(mode === undefined ? {} : { permission_mode: mode }),
            });
      toast(t('web.compose.sent'));
      go(href('mail', sent.mail_id));
    } catch (err) {
      if (isSignedOut(err)) props.onSignedOut();
      setErrors({ form: explain(err) });
    } finally {
      setBusy(false);
    }
  };

  const title =
    forwardId !== undefined
      ? 'web.compose.title_forward'
      : replyId !== undefined
        ? 'web.compose.title_reply'
        : 'web.compose.title';
  return (
    <form class="compose card" onSubmit={send} noValidate>
      <h1>{t(title)}</h1>
      {original !== undefined ? <p class="muted">{t('web.compose.about', { subject: original })}</p> : null}
      <AddressInput
        id="to"
        label={t('web.compose.to')}
        value={to}
        onInput={setTo}
        error={errors.to}
        required
      />
      {forwardId === undefined ? (
        <>
          <AddressInput
            id="cc"
            label={t('web.compose.cc')}
            value={cc}
            onInput={setCc}
            error={errors.cc}
            multiple
          />
          <label class="field">
            <span>{t('web.compose.subject')}</span>
            <input
              name="subject"
              type="text"
              value={subject}
              maxLength={500}
              onInput={(e) => setSubject((e.target as HTMLInputElement).value)}
            />
          </label>
        </>
      ) : null}
      <label class="field">
        <span>{t(forwardId === undefined ? 'web.compose.body' : 'web.compose.comment')}</span>
        <textarea
          name="body"
          rows={8}
          value={body}
          onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      {forwardId === undefined ? (
        <>
          <label class="field">
            <span>{t('web.compose.mode')}</span>
            <select
              name="mode"
              value={mode ?? ''}
              onChange={(e) => {
                const v = (e.target as HTMLSelectElement).value;
                setMode(v === '' ? undefined : (v as PermissionMode));
              }}
            >
              <option value="">{t('web.compose.mode_keep')}</option>
              <option value="workspace">{t('web.mode.workspace')}</option>
              <option value="plan">{t('web.mode.plan')}</option>
              <option value="full">{t('web.mode.full')}</option>
            </select>
            <span class="help">{t('web.compose.mode_help')}</span>
          </label>
          <label class="field">
            <span>{t('web.compose.attach')}</span>
            <input
              name="files"
              type="file"
              multiple
              onChange={(e) => void upload((e.target as HTMLInputElement).files)}
            />
          </label>
          {files.length > 0 ? (
            <ul class="attachments">
              {files.map((f) => (
                <li key={f.id} data-attachment-id={f.id}>
                  📎 {f.filename} <span class="muted small">{bytes(f.size_bytes)}</span>{' '}
                  <button
                    type="button"
                    class="link small"
                    onClick={() => setFiles((l) => l.filter((x) => x.id !== f.id))}
                  >
                    {t('web.compose.remove')}
                  </button>
                </li>
              ))}
            </ul>
          ) : null}
        </>
      ) : null}
      {errors.form ? (
        <p class="error" role="alert">
          {errors.form}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || uploading > 0}>
          {uploading > 0 ? t('web.compose.uploading') : t('web.compose.send')}
        </button>
        <a href={href('inbox')}>{t('web.compose.cancel')}</a>
      </div>
    </form>
  );
}
