// The shared confirmation dialog. An action runs inside it: errors stay in the dialog, next to the
// button, and the dialog closes only when the action succeeded (or the user cancelled).

import { ApiError } from './api.js';
import { setContent } from './dom.js';

const byId = (id) => document.getElementById(id);

let current = null;

function describe(error) {
  return error instanceof ApiError ? error.describe() : error.message || String(error);
}

function setBusy(busy) {
  byId('confirm-ok').disabled = busy;
  byId('confirm-cancel').textContent = busy && current?.stoppable ? 'Stop' : 'Cancel';
  byId('confirm-dialog').toggleAttribute('aria-busy', busy);
}

function showError(message) {
  const el = byId('confirm-error');
  el.textContent = message;
  el.hidden = !message;
}

function finish(result) {
  const pending = current;
  current = null;
  byId('confirm-dialog').close();
  pending?.resolve(result);
}

async function run() {
  if (!current || current.running) {
    return;
  }
  current.running = true;
  current.stopped = false;
  setBusy(true);
  showError('');
  const progress = (text) => { byId('confirm-progress').textContent = text; };
  progress('Working…');
  try {
    const message = await current.action({ progress, stopped: () => current?.stopped });
    finish(message || 'Done.');
  } catch (error) {
    if (current) {
      progress('');
      showError(describe(error));
    }
  } finally {
    if (current) {
      current.running = false;
      setBusy(false);
    }
  }
}

function cancel() {
  if (current?.running) {
    current.stopped = true;
    return;
  }
  finish(null);
}

/**
 * Asks for confirmation, then runs `action({progress, stopped})`, which returns a success message.
 * Resolves with that message, or null when cancelled. `body`: nodes or text (inputs allowed).
 * A `stoppable` action polls `stopped()`; Cancel then reads "Stop" while it runs.
 */
export function confirmAction({
  title, body, confirmLabel = 'Confirm', danger = false, stoppable = false, action,
}) {
  if (current) {
    finish(null);
  }
  return new Promise((resolve) => {
    current = { action, resolve, stoppable, running: false, stopped: false };
    byId('confirm-title').textContent = title;
    setContent(byId('confirm-body'), body);
    byId('confirm-progress').textContent = '';
    showError('');
    const ok = byId('confirm-ok');
    ok.textContent = confirmLabel;
    ok.classList.toggle('danger', danger);
    setBusy(false);
    byId('confirm-dialog').showModal();
    const firstField = byId('confirm-body').querySelector('input, select, textarea');
    (firstField || byId('confirm-cancel')).focus();
  });
}

export function installConfirmDialog() {
  const dialog = byId('confirm-dialog');
  byId('confirm-form').addEventListener('submit', (event) => {
    event.preventDefault();
    run();
  });
  byId('confirm-cancel').addEventListener('click', cancel);
  dialog.addEventListener('cancel', (event) => {
    event.preventDefault();
    cancel();
  });
}
