/**
 * Mail bodies are untrusted (SPEC H-1, H-4): they are rendered as Markdown by `marked`, with every
 * piece of raw HTML shown as text, and the result is sanitized by DOMPurify to a short list of
 * tags and attributes. Links keep only `http:`, `https:` and `mailto:` targets and open in a new
 * tab without a referrer; images are never loaded (an image becomes a link to it, and the page's
 * CSP allows no remote image anyway). Why libraries: both are well kept and widely used, and an
 * HTML sanitizer is exactly the code one should not write oneself.
 */
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';
import { t } from './texts.js';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `text` with the five HTML special characters escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Link targets that may stay clickable; anything else (javascript:, data:, relative…) loses its href. */
export const SAFE_LINK = /^(?:https?:|mailto:)/i;

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    // Raw HTML in a mail is shown as the text it is, never as markup.
    html(token: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(token.text);
    },
    // No image is loaded from a mail: it becomes a link the person may open themselves.
    image(token: Tokens.Image): string {
      const label = escapeHtml(t('web.mail.image', { alt: token.text || token.href }));
      return SAFE_LINK.test(token.href)
        ? `<a href="${escapeHtml(token.href)}" class="image-link">${label}</a>`
        : `<span class="image-link">${label}</span>`;
    },
  },
});

const ALLOWED_TAGS = [
  'a',
  'p',
  'br',
  'strong',
  'em',
  'del',
  'code',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'li',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'span',
];

let hooked = false;

function purifier(): typeof DOMPurify {
  if (!hooked) {
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName !== 'A') return;
      const href = node.getAttribute('href') ?? '';
      if (!SAFE_LINK.test(href)) node.removeAttribute('href');
      else {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer nofollow');
      }
    });
    hooked = true;
  }
  return DOMPurify;
}

/** Sanitized HTML of a mail body rendered as Markdown (see the module comment). */
export function renderMarkdown(body: string): string {
  const html = marked.parse(body) as string;
  return purifier().sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ['href', 'title', 'class', 'start', 'align'],
    ALLOWED_URI_REGEXP: SAFE_LINK,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
  });
}
