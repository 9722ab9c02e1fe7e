// Form pieces the checkout and issuer pages share: a labelled field with its error, so every
// form reads the same, works without JavaScript and tells assistive technology what failed.
import { attrs, html, type SafeHtml } from './html.js';

export interface Field {
  /** The form field name; the element id is `f-<name>` unless `id` is given. */
  name: string;
  /** The element id, when one page has two forms with a field of the same name. */
  id?: string;
  /** Shown above the input (already translated). */
  label: string;
  value?: string;
  type?: 'text' | 'email' | 'tel' | 'number' | 'password';
  /** e.g. `cc-number`, `cc-exp`, `cc-csc`, `cc-name`, `email`. */
  autocomplete?: string;
  inputmode?: 'text' | 'numeric' | 'decimal' | 'email' | 'tel';
  required?: boolean;
  maxlength?: number;
  /** A hint the browser checks before sending; the server checks again. */
  pattern?: string;
  placeholder?: string;
  /** The server's refusal of the last value (already translated), shown under the input. */
  error?: string;
}

export function field(f: Field): SafeHtml {
  const id = f.id ?? `f-${f.name}`;
  const errorId = `${id}-error`;
  const input = attrs({
    id,
    name: f.name,
    type: f.type ?? 'text',
    value: f.value,
    autocomplete: f.autocomplete,
    inputmode: f.inputmode,
    required: f.required,
    maxlength: f.maxlength,
    pattern: f.pattern,
    placeholder: f.placeholder,
    'aria-invalid': f.error ? 'true' : undefined,
    'aria-describedby': f.error ? errorId : undefined,
  });
  return html`<label for="${id}">${f.label}</label><input ${input}>${f.error && html`<p class="error" id="${errorId}">${f.error}</p>`}`;
}
