// The only way the dashboard talks to the broker: relative URLs, JSON, bearer token, error mapping.

import { getToken, requestToken } from './auth.js';

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }

  /** True when the broker could not be reached or failed on its side. */
  get unreachable() {
    return this.status === 0 || this.status >= 500;
  }

  /** A sentence for the user, near the action that failed. */
  describe() {
    // a page's origin refused (QUEEN_CORS_ORIGINS) is no matter of the token's role
    if (this.status === 403 && !/origin/i.test(this.message)) {
      return `Permission denied: your token's role may not do this (${this.message}).`;
    }
    if (this.status === 401) {
      return `Authentication required: ${this.message}.`;
    }
    if (this.status === 0) {
      return `Broker unreachable: ${this.message}.`;
    }
    return `${this.message} (HTTP ${this.status}).`;
  }
}

function url(path, query) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') {
      params.set(key, String(value));
    }
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function readBody(response) {
  const type = response.headers.get('content-type') || '';
  const text = await response.text();
  if (!text) {
    return null;
  }
  if (type.includes('json')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

function errorText(body, response) {
  if (body && typeof body === 'object' && typeof body.error === 'string') {
    return body.error;
  }
  if (typeof body === 'string' && body.trim()) {
    return body.trim().slice(0, 200);
  }
  return response.statusText || 'Request failed';
}

/** A 200 answer that still carries `{"error": ...}` (old Queen style) is an error too. */
function isErrorBody(body) {
  return body && typeof body === 'object' && !Array.isArray(body)
    && typeof body.error === 'string' && body.success !== true;
}

const TIMEOUT_MS = 15000;

function networkError(cause) {
  const message = cause.name === 'TimeoutError'
    ? `no answer within ${TIMEOUT_MS / 1000} s`
    : cause.message || 'network error';
  return new ApiError(0, message, null);
}

/**
 * Calls the broker. Resolves with the parsed JSON (null for an empty answer); rejects with an
 * ApiError (status 0 when the broker is unreachable or does not answer within 15 s). A 401 asks
 * for a token (see requestToken).
 */
export async function api(path, { method = 'GET', query, body } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  const token = getToken();
  if (token) {
    headers.Authorization = `Bearer ${token}`;
  }
  let response;
  let parsed;
  try {
    response = await fetch(url(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    parsed = await readBody(response);
  } catch (cause) {
    throw networkError(cause);
  }
  if (response.status === 401) {
    const message = errorText(parsed, response);
    requestToken(message);
    throw new ApiError(401, message, parsed);
  }
  if (!response.ok || isErrorBody(parsed)) {
    throw new ApiError(response.status, errorText(parsed, response), parsed);
  }
  return parsed;
}

export const enc = encodeURIComponent;

const kept = new Map();

/** How long a dropdown's choices stand: a new queue or group shows in them within this. */
export const CHOICES_MS = 30000;

/** Forgets every kept answer (the token changed). */
export function forgetHelperData() {
  kept.clear();
}

/**
 * Data a page shows beside its own list (a dropdown's choices, a column), fetched again only after
 * `maxAgeMs`. Until then, and when a fetch fails, the last answer stands (`fallback`, null unless
 * given, before the first, which the page shows as unknown): one such request that failed, a 503
 * of a read past its statement timeout, blanked the whole page; and the queue list (1.4 s at 3,000
 * queues) was asked every 5 s by every open tab only to fill a dropdown.
 */
export async function helperData(path, { query, fallback = null, maxAgeMs = 0 } = {}) {
  const key = url(path, query);
  const last = kept.get(key);
  if (last && Date.now() - last.at < maxAgeMs) {
    return last.value;
  }
  try {
    const value = await api(path, { query });
    kept.set(key, { value, at: Date.now() });
    return value;
  } catch {
    return last ? last.value : fallback;
  }
}
