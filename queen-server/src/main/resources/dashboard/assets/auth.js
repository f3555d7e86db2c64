// Token storage, role decoding and the token prompt.
// The role only decides which actions are shown; the broker enforces access on every call.

const STORAGE_KEY = 'queen.dashboard.token';
const RANK = { 'read-only': 1, 'read-write': 2, admin: 3 };

export const AUTH_EVENT = 'queen:auth';

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
 * The viewer's role: 'none' without a token (auth off: everything is shown), otherwise the highest
 * known role among the claims `role` (string) and `roles` (array), or 'read-only' when the token
 * names no known role.
 */
export function currentRole() {
  const token = getToken();
  if (!token) {
    return 'none';
  }
  const claims = decodeClaims(token) || {};
  const names = [claims.role, ...(Array.isArray(claims.roles) ? claims.roles : [])];
  const best = names
    .filter((name) => typeof name === 'string' && RANK[name])
    .sort((a, b) => RANK[b] - RANK[a])[0];
  return best || 'read-only';
}

export function isAdmin() {
  const role = currentRole();
  return role === 'none' || role === 'admin';
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

/** Opens the token prompt (once: a prompt already open is left as it is). */
export function promptForToken(reason) {
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
  document.getElementById('token-cancel').addEventListener('click', () => dialog.close());
}
