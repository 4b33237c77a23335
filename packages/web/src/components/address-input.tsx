/**
 * An address field with suggestions from the Gateway (`GET /me/contacts/suggest`, the same
 * suggestions agents get from suggest_address): type a name, then `@` and a path; pick with a tap
 * or the arrow keys and Enter. `multiple` fields (cc) take a comma-separated list and complete
 * the last entry.
 */
import type { Suggestion } from '@agentmail/protocol';
import type { TextKey } from '@agentmail/shared-policy';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { t } from '../texts.js';

/** Wait after the last keystroke before asking for suggestions, in ms. @default 150 */
export const SUGGEST_DEBOUNCE_MS = 150;

/** The (name, path) a partly typed address asks suggestions for: `pi@/srv/ap` → name `pi`, path `/srv/ap`. */
export function suggestQuery(text: string): { name?: string; path?: string } {
  const at = text.indexOf('@');
  if (at < 0) return text.trim() === '' ? {} : { name: text.trim() };
  const name = text.slice(0, at).trim();
  const path = text.slice(at + 1).trim();
  return { ...(name === '' ? {} : { name }), ...(path.startsWith('/') ? { path } : {}) };
}

const REASONS: Readonly<Record<string, TextKey>> = {
  'existing session': 'web.suggest.existing_session',
  'announced workspace (new session)': 'web.suggest.workspace',
  'default session': 'web.suggest.default_session',
  person: 'web.suggest.person',
};

/** Why an address is suggested, in the page's words (the Gateway's own words for a reason it adds later). */
function reasonText(reason: string): string {
  const key = REASONS[reason];
  return key === undefined ? reason : t(key);
}

/** Props of {@link AddressInput}. */
export interface AddressInputProps {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  multiple?: boolean;
  error?: string | undefined;
  required?: boolean;
}

export function AddressInput(props: AddressInputProps) {
  const [suggestions, setSuggestions] = useState<Suggestion[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const last = props.multiple ? (props.value.split(',').at(-1) ?? '') : props.value;

  useEffect(() => {
    if (!open) return;
    clearTimeout(timer.current);
    let current = true;
    timer.current = setTimeout(() => {
      api.suggest(suggestQuery(last)).then(
        (r) => {
          if (current) {
            setSuggestions(r.suggestions.slice(0, 12));
            setActive(0);
          }
        },
        () => {
          if (current) setSuggestions([]);
        },
      );
    }, SUGGEST_DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer.current);
    };
  }, [last, open]);

  const pick = (s: Suggestion) => {
    if (props.multiple) {
      const parts = props.value.split(',').map((p) => p.trim());
      parts[parts.length - 1] = s.address;
      props.onInput(`${parts.filter((p) => p !== '').join(', ')}, `);
    } else props.onInput(s.address);
    setOpen(false);
  };

  const listId = `${props.id}-suggestions`;
  const shown = open && suggestions.length > 0;
  return (
    <div class="field address">
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        name={props.id}
        type="text"
        autocomplete="off"
        autocapitalize="none"
        spellcheck={false}
        role="combobox"
        aria-expanded={shown}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-invalid={props.error ? 'true' : undefined}
        required={props.required}
        value={props.value}
        placeholder={t('web.compose.address_placeholder')}
        onInput={(e) => {
          props.onInput((e.target as HTMLInputElement).value);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setTimeout(() => setOpen(false), 150)}
        onKeyDown={(e) => {
          if (!shown) return;
          if (e.key === 'ArrowDown') setActive((a) => Math.min(a + 1, suggestions.length - 1));
          else if (e.key === 'ArrowUp') setActive((a) => Math.max(a - 1, 0));
          else if (e.key === 'Enter') {
            const s = suggestions[active];
            if (s) pick(s);
          } else if (e.key === 'Escape') setOpen(false);
          else return;
          e.preventDefault();
        }}
      />
      {shown ? (
        <ul class="suggestions" id={listId}>
          {suggestions.map((s, i) => (
            <li key={s.address} class={i === active ? 'active' : ''}>
              <button
                type="button"
                tabIndex={-1}
                data-address={s.address}
                onMouseDown={(e) => {
                  // Before the input's blur closes the list.
                  e.preventDefault();
                  pick(s);
                }}
                onClick={() => pick(s)}
              >
                <span class="address">{s.address}</span>
                <span class="muted small">{reasonText(s.reason)}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {props.error ? (
        <p class="error" role="alert">
          {props.error}
        </p>
      ) : null}
    </div>
  );
}
