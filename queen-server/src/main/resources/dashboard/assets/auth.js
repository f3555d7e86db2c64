// Token storage, role decoding and the token prompt.
// The role only decides which actions are shown; the broker enforces access on every call.

const STORAGE_KEY = 'queen.dashboard.token';
/** The broker's default role names, strongest first. */
const KNOWN_ROLES = ['admin', 'read-write', 'read-only'];

export const AUTH_EVENT = 'queen:auth';

/** Set when the user closed the token prompt; cleared when they ask for it again. */
let dismissed = false;

export function getToken() {
  return sessionStorage.getItem(STORAGE_KEY) || '';
}

function setToken(token) {
  if (token) {
    sessionStorage.setItem(STORAGE_KEY, token);
  } else {
    sessionStorage.removeItem(STORAGE_KEY);
  }
  document.dispatchEvent(new Event(AUTH_EVENT));
}

export function forgetToken() {
  dismissed = true;
  setToken('');
}

function decodeSegment(segment) {
  const base64 = segment.replace(/-/g, '+').replace(/_/g, '/');
  const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
  const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes));
}

function decodeClaims(token) {
  const parts = token.replace(/^bearer\s+/i, '').split('.');
  if (parts.length !== 3) {
    return null;
  }
  try {
    return decodeSegment(parts[1]);
  } catch {
    return null;
  }
}

/**
 * The viewer's role, which only decides which actions are shown: 'none' without a token (auth off:
 * everything is shown), else the strongest of the broker's default role names found in the claims
 * `role` (string) and `roles` (array). The broker's role names are configurable, so a token naming
 * none of them is 'unknown' and every action is shown: the broker refuses what the role may not do
 * and the page shows its 403.
 */
export function currentRole() {
  const token = getToken();
  if (!token) {
    return 'none';
  }
  const claims = decodeClaims(token) || {};
  const names = [claims.role, ...(Array.isArray(claims.roles) ? claims.roles : [])];
  return KNOWN_ROLES.find((role) => names.includes(role)) || 'unknown';
}

/** False only when the token's role is known not to be admin. */
export function mayAdminister() {
  return ['none', 'unknown', 'admin'].includes(currentRole());
}

function tokenDialog() {
  return document.getElementById('token-dialog');
}

function promptText(reason) {
  if (!reason) {
    return 'Enter the bearer token issued for this broker.';
  }
  return getToken()
    ? `The broker rejected the stored token: ${reason}. Enter a new one.`
    : `The broker requires a token: ${reason}.`;
}

function openDialog(reason) {
  const dialog = tokenDialog();
  if (dialog.open) {
    return;
  }
  document.getElementById('token-reason').textContent = promptText(reason);
  const input = document.getElementById('token-input');
  input.value = '';
  dialog.showModal();
  input.focus();
}

/** Opens the token prompt because the user asked for it ("Set token", "Sign in"). */
export function promptForToken(reason) {
  dismissed = false;
  openDialog(reason);
}

/**
 * Opens the token prompt after a 401, unless the user dismissed it (Cancel, Escape, "Forget
 * token") or another dialog is open: the page then shows a sign-in notice instead.
 */
export function requestToken(reason) {
  if (!dismissed && !document.querySelector('dialog[open]')) {
    openDialog(reason);
  }
}

export function installTokenDialog() {
  const dialog = tokenDialog();
  const input = document.getElementById('token-input');
  document.getElementById('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = input.value.trim().replace(/^bearer\s+/i, '');
    if (!token) {
      input.focus();
      return;
    }
    dialog.close();
    input.value = '';
    setToken(token);
  });
  document.getElementById('token-cancel').addEventListener('click', () => {
    dismissed = true;
    dialog.close();
  });
  dialog.addEventListener('cancel', () => {
    dismissed = true;
  });
}
