// Forms with labelled fields, each with its own error line, and one alert beside the submit button
// for errors about the whole action. A 429 disables the action and counts down from Retry-After.
import { ApiError } from './api.js'
import { h } from './dom.js'
import { t } from './i18n.js'

let ids = 0

export interface FieldOptions {
  type?: string
  required?: boolean
  autocomplete?: string
  hint?: string
  value?: string
  minlength?: string
  maxlength?: string
  pattern?: string
  inputmode?: string
  placeholder?: string
  /** a textarea of this many rows rather than a one-line input */
  rows?: string
}

/** A label, its input, an optional hint, and the line where this field's errors appear. */
export function field(label: string, name: string, opts: FieldOptions = {}): HTMLElement {
  const id = `f${++ids}-${name}`
  const hint = opts.hint === undefined ? null : h('p', { class: 'hint', id: `${id}-hint` }, opts.hint)
  const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true })
  const input = h(opts.rows === undefined ? 'input' : 'textarea', {
    id,
    name,
    rows: opts.rows,
    type: opts.rows === undefined ? (opts.type ?? 'text') : undefined,
    required: opts.required,
    autocomplete: opts.autocomplete,
    minlength: opts.minlength,
    maxlength: opts.maxlength,
    pattern: opts.pattern,
    inputmode: opts.inputmode,
    placeholder: opts.placeholder,
    'aria-describedby': [hint?.id, error.id].filter(Boolean).join(' '),
  })
  if (opts.value !== undefined) input.value = opts.value
  return h('div', { class: 'field' }, h('label', { for: id }, label), hint, input, error)
}

/** The alert line of an action, placed next to its button. */
export const actionAlert = () => h('p', { class: 'action-error', role: 'alert', hidden: true })

export function clearErrors(root: HTMLElement): void {
  for (const input of root.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid')
  for (const el of root.querySelectorAll<HTMLElement>('.field-error, .action-error')) {
    el.textContent = ''
    el.hidden = true
  }
}

/**
 * Shows an error where it belongs: each field error under its input (the topmost one focused),
 * anything else in `alert`. A 429 disables `button` until Retry-After has passed.
 */
export function showError(err: unknown, root: HTMLElement, alert: HTMLElement, button?: HTMLButtonElement): void {
  if (!(err instanceof ApiError)) throw err
  let first: HTMLInputElement | undefined
  for (const [name, message] of Object.entries(err.fields)) {
    // A group of radio buttons or checkboxes shows its error once, under the group (its fieldset's error line).
    const input = root.querySelector<HTMLInputElement>(`[name="${name}"]`)
    const grouped = input?.type === 'radio' || input?.type === 'checkbox'
    const line = input === null ? null : document.getElementById(`${grouped ? input.id.replace(/-[^-]+$/, '') : input.id}-error`)
    if (input === null || line === null) continue
    input.setAttribute('aria-invalid', 'true')
    line.textContent = message
    line.hidden = false
    // A field folded away in a closed disclosure is shown with its error.
    const folded = input.closest('details')
    if (folded !== null) folded.open = true
    // The API's order is not the page's: focus goes to the highest field in error.
    if (first === undefined || first.compareDocumentPosition(input) & Node.DOCUMENT_POSITION_PRECEDING) first = input
  }
  if (first !== undefined) {
    first.focus()
    return
  }
  if (err.status === 429 && button !== undefined) return countdown(alert, button, Math.max(1, err.retryAfter))
  alert.textContent = err.status >= 500 && err.requestId !== null ? t('error.withRequest', { message: err.message, id: err.requestId }) : err.message
  alert.hidden = false
}

/** "Too many attempts. Try again in 5 s." ticking down, the button disabled meanwhile. */
function countdown(alert: HTMLElement, button: HTMLButtonElement, seconds: number): void {
  const until = Date.now() + seconds * 1000
  button.disabled = true
  alert.hidden = false
  alert.classList.add('countdown')
  const tick = () => {
    const left = Math.ceil((until - Date.now()) / 1000)
    if (!alert.isConnected) return
    if (left <= 0) {
      button.disabled = false
      alert.classList.remove('countdown')
      alert.textContent = t('retry.now')
      return
    }
    alert.textContent = t('retry.wait', { count: left })
    window.setTimeout(tick, 250)
  }
  tick()
}

/**
 * Runs `action` for a form submit or a button: errors cleared first, the button busy meanwhile,
 * and whatever goes wrong shown by showError.
 */
export async function run(root: HTMLElement, alert: HTMLElement, button: HTMLButtonElement, action: () => Promise<void>): Promise<void> {
  clearErrors(root)
  button.disabled = true
  button.setAttribute('aria-busy', 'true')
  try {
    await action()
    button.disabled = false
  } catch (err) {
    button.disabled = false
    showError(err, root, alert, button)
  } finally {
    button.removeAttribute('aria-busy')
  }
}

/** A form whose submit runs `action`; the API judges the input (novalidate), so its messages are the ones shown. */
export function form(label: string, children: Node[], submitText: string, action: (data: FormData) => Promise<void>): HTMLFormElement {
  const alert = actionAlert()
  const submit = h('button', { type: 'submit', class: 'primary' }, submitText)
  const el = h('form', { 'aria-label': label, novalidate: true }, ...children, h('div', { class: 'actions' }, submit, alert))
  el.addEventListener('submit', (ev) => {
    ev.preventDefault()
    void run(el, alert, submit, () => action(new FormData(el)))
  })
  return el
}

/** The string value of a form field ('' when absent). */
export const value = (data: FormData, name: string): string => String(data.get(name) ?? '')
