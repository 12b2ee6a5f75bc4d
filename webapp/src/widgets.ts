// Small pieces several screens share: the copy button, the download button and the confirmation dialog.
import { blob } from './api.js'
import { h, announce } from './dom.js'
import { actionAlert, run } from './forms.js'
import { t } from './i18n.js'

/** A button that copies `text`, saying so in the status line; `label` names what it copies ("Copy short URL"). */
export function copyButton(text: string, label: string): HTMLButtonElement {
  return h('button', { type: 'button', class: 'copy', 'aria-label': label, onclick: () => void copy(text) }, t('copy'))
}

async function copy(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text)
    announce(t('copy.done', { text }))
  } catch {
    // No clipboard access (a plain-http address is not a secure context): select it for Ctrl+C.
    announce(t('copy.failed', { text }))
  }
}

/**
 * A button that downloads an API resource as `filename`: fetched with the token (a plain link
 * cannot send one), then saved from a blob: URL released once the browser has it.
 */
export function downloadButton(label: string, path: string, filename: string): HTMLButtonElement {
  const button: HTMLButtonElement = h('button', {
    type: 'button',
    onclick: async () => {
      button.disabled = true
      try {
        const url = URL.createObjectURL(await blob(path))
        const a = h('a', { href: url, download: filename, hidden: true })
        document.body.append(a)
        a.click()
        a.remove()
        window.setTimeout(() => URL.revokeObjectURL(url), 60_000)
        announce(t('download.done', { file: filename }))
      } catch (err) {
        announce(err instanceof Error ? err.message : t('download.failed', { file: filename }))
      } finally {
        button.disabled = false
      }
    },
  }, label)
  return button
}

/**
 * A modal dialog (the browser's own <dialog>: focus stays inside, Escape cancels) that runs
 * `action` on confirmation and shows its error inside the dialog, next to the button.
 */
export function confirmDialog(opts: { trigger: string; label?: string; title: string; text: string; confirm: string; action: () => Promise<void> }): HTMLButtonElement {
  const { title, text, action } = opts
  const alert = actionAlert()
  const cancel = h('button', { type: 'button', onclick: () => dialog.close() }, t('cancel'))
  const confirm = h('button', { type: 'button', class: 'danger solid' }, opts.confirm)
  const heading = h('h2', { id: `dialog-${Math.random().toString(36).slice(2)}` }, title)
  const dialog = h('dialog', { 'aria-labelledby': heading.id }, heading, h('p', {}, text), h('div', { class: 'actions' }, cancel, confirm), alert)
  confirm.addEventListener('click', () =>
    void run(dialog, alert, confirm, async () => {
      await action()
      dialog.close()
    }),
  )
  dialog.addEventListener('close', () => dialog.remove())
  const open = () => {
    document.body.append(dialog)
    dialog.showModal()
    cancel.focus()
  }
  return h('button', { type: 'button', class: 'danger', 'aria-label': opts.label, onclick: open }, opts.trigger)
}
