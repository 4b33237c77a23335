/**
 * A Gateway refusal in the words of the person at the command line (SPEC H-2). The Gateway's
 * `detail` and `suggestion` are written for API clients: they name HTTP routes
 * (`GET /api/v1/agent/contacts`), carry rule ids (`(SPEC G-2)`) and field lists. Here each error
 * code the CLI can meet gets the `agentmail` command that fixes it; the server's words are kept
 * only where they already speak of addresses and values, never of routes. `--json` output keeps
 * the server's body exactly (it is attached to the error as `body`).
 */
import type { ErrorBody } from '@agentmail/protocol';
import type { ApiRequestInfo } from '@agentmail/shared-policy/client';
import { distance } from 'fastest-levenshtein';

/** What the CLI prints for a refusal: a one-line message, maybe a detail, and what to do. */
export interface PersonWords {
  message: string;
  detail?: string;
  suggestion?: string;
}

/** `(SPEC G-2)`, `(see SPEC G-3)`, `(SPEC G-31, G-35)`: rule ids are for developers. */
const RULE_IDS = /\s*\((?:see )?SPEC [A-Z]+-\d+(?:,\s*[A-Z]+-\d+)*\)/g;
/** An HTTP route a person cannot call. */
const HTTP_ROUTE = /\b(?:GET|POST|PUT|DELETE)\s+\/|\/api\/v1\/|\{"/;

/** The server's text without rule ids, and without a leading `field "to": ` (the CLI names its own flags). */
function plain(text: string | undefined): string {
  return (text ?? '')
    .replace(RULE_IDS, '')
    .replace(/^field "[^"]+": /, '')
    .trim();
}

/** The server's suggestion when it speaks the person's language (no route, no JSON); else none. */
function serverSuggestion(body: ErrorBody): string | undefined {
  const s = plain(body.suggestion);
  return s === '' || HTTP_ROUTE.test(s) ? undefined : s;
}

/** The Gateway's `detail` is `message: explanation`; split off the explanation (rule ids removed). */
function split(detail: string): { message: string; detail?: string } {
  const at = detail.indexOf(': ', detail.startsWith('field "') ? detail.indexOf('": ') + 3 : 0);
  if (at === -1) return { message: detail };
  const rest = detail.slice(at + 2).trim();
  return rest === '' || HTTP_ROUTE.test(rest)
    ? { message: detail.slice(0, at) }
    : { message: detail.slice(0, at), detail: rest };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The Gateway's closing list of a body's accepted fields: for API clients, not for a person. */
const ACCEPTED_FIELDS = /\s*Accepted fields:[\s\S]*$/;

/** A request field as the person wrote it: the CLI's argument or flag. */
const FIELD_WORDS: Readonly<Record<string, string>> = {
  to: 'the recipient',
  cc: '--cc',
  subject: '--subject',
  body: '--body',
  comment: '--body',
  reply_to: '--reply-to',
  attachment_ids: '--attach',
  permission_mode: '--mode',
  max_rounds: '--max-rounds',
  limit: '--limit',
  before: '--before',
  name: 'the name',
  agent_name: 'the agent name',
  models: 'the models',
  note: '--note',
  answers: 'the answer',
  decision: 'the decision',
};

/** The shape of an agent or user name (protocol `Name`), as a fix with an example. */
const NAME_FIX = 'a name of letters, digits, "_", "-" and "." (not starting with "-" or "."), e.g. pi-laptop';

/** The fix of a refused field, where the server's words name none (every CLI error has a "try:" line). */
const FIELD_FIXES: Readonly<Record<string, string>> = {
  subject:
    "give a short --subject and put the rest in the body; without --subject the body's first line is the subject",
  body: 'split it over several mails, or attach it as a file with --attach <file>; a long text goes in with --body-file <path> or --body - (stdin)',
  name: NAME_FIX,
  agent_name: NAME_FIX,
  note: 'a shorter --note (at most 20,000 characters)',
  answers: 'agentmail answer <id> <option>…, or free text; agentmail deny <id> declines',
  decision:
    'a question: agentmail answer <id> <option>… or agentmail deny <id>; an approval: agentmail approve <id> or agentmail deny <id>',
};

/**
 * A 400 of the Gateway in the person's words: the Gateway joins every issue
 * (`field "to": must be at least 1 characters; field "to": address "": …`) and appends the accepted
 * fields. The person gets the most telling issue (an address's own explanation before a bare
 * schema limit), named by their argument or flag, and no field list.
 */
function badRequestWords(body: ErrorBody): PersonWords {
  // `cc[1]` for the second --cc: the flag is what the person wrote.
  const field = str((body as { field?: unknown }).field)?.replace(/\[\d+\]$/, '');
  const issues = (str(body.detail) ?? body.error)
    .replace(ACCEPTED_FIELDS, '')
    .replace(RULE_IDS, '')
    .split(/;\s*(?=field ")/)
    .map((issue) => issue.replace(/^field "[^"]+": /, '').trim())
    .filter((issue) => issue !== '');
  const best = issues.find((issue) => issue.startsWith('address "')) ?? issues[0] ?? body.error;
  const who = field === undefined ? undefined : (FIELD_WORDS[field] ?? `field "${field}"`);
  const address = /^address ("(?:[^"\\]|\\.)*"): ([\s\S]*)$/.exec(best);
  if (address) {
    const what = field === 'to' ? 'the recipient' : field === 'cc' ? 'the --cc address' : 'the address';
    return {
      message: `${what} ${address[1]} is not an address`,
      detail: address[2] ?? '',
      suggestion: 'who you can write to, and their addresses: agentmail contacts',
    };
  }
  const { message, detail } = split(best);
  // Every refused value gets a try: line: its own fix, else the Gateway's own (in CLI words, no
  // route), else where the command's options are told.
  const fix =
    (field === undefined ? undefined : FIELD_FIXES[field]) ??
    serverSuggestion(body) ??
    `give ${who ?? 'the value'} again as the message says (the command's options: its --help)`;
  return {
    message: who === undefined ? message : `${who}: ${message}`,
    ...(detail === undefined ? {} : { detail }),
    suggestion: fix,
  };
}

/** Where an id that was not found can be looked up, by the endpoint that did not find it. */
const NOT_FOUND_HINTS: Partial<Record<ApiRequestInfo['id'], string>> = {
  meMail: 'your mails and their ids: agentmail inbox --all',
  meThread: 'your mails and their ids: agentmail inbox --all',
  meDecide: 'what waits for you: agentmail permissions (decided ones too: --all)',
  meAttachment: 'the attachments of a mail: agentmail read <mail id>',
  meSend: 'your mails and their ids: agentmail inbox --all',
  adminRevokeAgentKey: 'the keys and their ids: agentmail agent key list',
  adminResetToken: 'the users: agentmail user list',
};

/** An id that was not found, with where to look it up. */
function notFoundWords(request: ApiRequestInfo, message: string): PersonWords {
  const hint = NOT_FOUND_HINTS[request.id];
  return hint === undefined ? { message } : { message, suggestion: hint };
}

/**
 * The person's words for the Gateway's refusal `body` of `request` (SPEC H-2):
 * a message, a detail and a suggestion that names an `agentmail` command, with no HTTP route and
 * no rule id in them.
 */
export function personWords(request: ApiRequestInfo, body: ErrorBody): PersonWords {
  const code = str((body as { code?: unknown }).code) ?? '';
  const detail = plain(body.detail);
  const fromServer = serverSuggestion(body);
  const base = split(detail === '' ? body.error : detail);
  switch (code) {
    case 'AM_GW_BAD_REQUEST':
      return badRequestWords(body);
    case 'AM_GW_UNKNOWN_RECIPIENT':
      // A key was issued for the name, its bridge never registered: start it, not "check the name".
      if ((body as { key_issued?: unknown }).key_issued === true)
        return {
          ...base,
          suggestion:
            'start its bridge once with that key (installed as a service: agentmail doctor says what is missing), then send again',
        };
      return { message: base.message, suggestion: 'see who you can write to: agentmail contacts' };
    case 'AM_GW_UNAUTHENTICATED':
      return {
        message: `the Gateway at ${new URL(request.url).origin} does not accept your token (${base.message})`,
        suggestion:
          'log in with a valid token: agentmail login --url <url> --token <token>\n' +
          'lost it? an admin gives you a new one with: agentmail user reset-token <your name>',
      };
    case 'AM_GW_FORBIDDEN': {
      const b = body as { needs?: unknown; field?: unknown; owner?: unknown; permission_mode?: unknown };
      if (b.needs === 'user_token')
        return {
          message: 'the token given is an agent key; people use their user token',
          suggestion: 'agentmail login --url <url> --token <your user token>',
        };
      if (b.field === 'permission_mode')
        return {
          ...base,
          suggestion: `leave out --mode to keep mode ${str(b.permission_mode) ?? 'as it is'}, or start a new session in the mode you want (an address ending in ".new")`,
        };
      if (request.auth === 'admin')
        return {
          message: `${base.message}: this command is for admins`,
          suggestion: "run it with an admin's token: agentmail --token <admin token> …",
        };
      return fromServer === undefined ? base : { ...base, suggestion: fromServer };
    }
    case 'AM_GW_NOT_FOUND':
      // No such route: the URL has a path of its own, or the Gateway is of another version.
      if (/^no route /.test(body.detail ?? ''))
        return {
          message: `the Gateway at ${new URL(request.url).origin} does not know this command's request`,
          suggestion:
            'give --url as the Gateway prints it (http://host:port, no path), and use a CLI of the same version as the Gateway',
        };
      return notFoundWords(request, base.message);
    case 'AM_GW_UNKNOWN_ATTACHMENT':
      return notFoundWords(request, base.message);
    case 'AM_GW_ALREADY_DECIDED':
      return { message: base.message, suggestion: 'how it was decided: agentmail permissions --all' };
    case 'AM_GW_INTERNAL':
    case 'AM_GW_STORAGE_BUSY':
      return {
        message: `the Gateway failed (${base.message})`,
        suggestion: 'try again; if it keeps failing, the Gateway log has the cause',
      };
    default:
      return fromServer === undefined ? base : { ...base, suggestion: fromServer };
  }
}

/** Did the person perhaps mean one of `names`? The closest by edit distance (≤2), or a prefix match. */
export function closestNames(wanted: string, names: readonly string[], max = 3): string[] {
  const w = wanted.toLowerCase();
  const scored = names
    .map((name) => ({ name, d: distance(w, name.toLowerCase()) }))
    .filter(({ name, d }) => d <= 2 || name.toLowerCase().startsWith(w) || w.startsWith(name.toLowerCase()))
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name));
  return scored.slice(0, max).map((s) => s.name);
}
