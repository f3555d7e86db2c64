// Hash router, refresh loop, stale banner and session header.

import {
  AUTH_EVENT, currentRole, forgetToken, getToken, installTokenDialog, promptForToken,
} from './auth.js';
import { ApiError, forgetHelperData } from './api.js';
import { installConfirmDialog } from './dialogs.js';
import { REFRESH_EVENT, h, patchContent, setContent, timeEl } from './dom.js';
import { clock } from './format.js';
import overviewPage from './pages/overview.js';
import queuesPage from './pages/queues.js';
import queuePage from './pages/queue.js';
import groupsPage from './pages/groups.js';
import dlqPage from './pages/dlq.js';
import messagesPage from './pages/messages.js';
import messagePage from './pages/message.js';
import notFoundPage from './pages/not-found.js';

const REFRESH_MS = 5000;

const main = document.getElementById('main');
const banner = document.querySelector('[data-testid="stale"]');
const lastRefresh = document.querySelector('[data-testid="last-refresh"]');

let current = null;
let lastSuccess = null;
// the page whose refresh is under way, and whether another was asked meanwhile: per page, so that a
// page just opened does not wait for the last one's requests (2-4 s after a queue of 30 groups)
const inFlight = new WeakMap();
const again = new WeakSet();

/**
 * '#/queues/orders?x=1' -> {path: ['queues', 'orders'], query: URLSearchParams}; path is null when
 * a segment is not valid percent-encoding.
 */
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [pathPart, queryPart = ''] = raw.split('?');
  const query = new URLSearchParams(queryPart);
  try {
    return { path: pathPart.split('/').filter(Boolean).map(decodeURIComponent), query };
  } catch {
    return { path: null, query };
  }
}

function resolve({ path, query }) {
  const notFound = () => ({ nav: null, page: notFoundPage() });
  if (!path) {
    return notFound();
  }
  const [section = 'overview', ...rest] = path;
  const routes = {
    overview: () => rest.length === 0 && { nav: 'overview', page: overviewPage() },
    queues: () => (rest.length === 0
      ? { nav: 'queues', page: queuesPage() }
      : rest.length === 1 && { nav: 'queues', page: queuePage(rest[0]) }),
    groups: () => rest.length === 0 && { nav: 'groups', page: groupsPage(query) },
    dlq: () => rest.length === 0 && { nav: 'dlq', page: dlqPage(query) },
    messages: () => (rest.length === 0
      ? { nav: 'messages', page: messagesPage(query) }
      : rest.length === 2 && { nav: 'messages', page: messagePage(rest[0], rest[1]) }),
  };
  return (Object.hasOwn(routes, section) && routes[section]()) || notFound();
}

function markNav(nav) {
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === nav) {
      a.setAttribute('aria-current', 'page');
    } else {
      a.removeAttribute('aria-current');
    }
  }
}

function showFresh() {
  lastSuccess = new Date();
  banner.hidden = true;
  setContent(lastRefresh, 'Updated ', timeEl(lastSuccess.toISOString(), clock(lastSuccess)));
}

function failureReason(error) {
  if (!(error instanceof ApiError)) {
    return `The page failed to update: ${error.message}`;
  }
  if (error.status === 0) {
    return `Broker unreachable (${error.message})`;
  }
  return `Refresh failed: ${error.describe().replace(/\.$/, '')}`;
}

/** A 401 gets a sign-in notice that stays put (the token prompt may have been dismissed). */
function signInNotice(error, since) {
  const why = getToken() ? 'The broker rejected the stored token' : 'The broker requires a token';
  return [
    h('strong', null, 'Sign in to see data.'), ` ${why} (${error.message}). `, since, ' ',
    h('button', {
      type: 'button', class: 'small primary', 'data-action': 'sign-in', 'data-testid': 'banner-sign-in',
    }, 'Sign in'),
  ];
}

function showStale(error) {
  const since = lastSuccess
    ? ['Showing data from ', timeEl(lastSuccess.toISOString(), clock(lastSuccess)), '.']
    : 'No data loaded yet.';
  const signIn = error instanceof ApiError && error.status === 401;
  banner.classList.toggle('banner-auth', signIn);
  if (signIn) {
    patchContent(banner, signInNotice(error, since));
  } else {
    patchContent(banner, `${failureReason(error)}. `, since, ` Retrying every ${REFRESH_MS / 1000} s.`);
  }
  banner.hidden = false;
}

async function refreshOnce(page) {
  try {
    await page.refresh();
    if (page === current) {
      page.el.setAttribute('data-loaded', 'true');
      showFresh();
    }
  } catch (error) {
    if (page === current) {
      showStale(error);
    }
    if (!(error instanceof ApiError)) {
      console.error(error);
    }
  }
}

/** Runs a refresh of the current page now, or right after its own one in flight. */
function refresh() {
  const page = current;
  if (!page) {
    return;
  }
  if (inFlight.has(page)) {
    again.add(page);
    return;
  }
  inFlight.set(page, refreshOnce(page).finally(() => {
    inFlight.delete(page);
    if (again.delete(page) && page === current) {
      refresh();
    }
  }));
}

function navigate(focus) {
  const route = resolve(parseHash());
  current = route.page;
  // the last good refresh is the page's own: another page's time said this one had loaded then
  lastSuccess = null;
  banner.hidden = true;
  setContent(lastRefresh);
  markNav(route.nav);
  main.replaceChildren(current.el);
  document.title = `${current.title} · Queen`;
  if (focus) {
    current.el.querySelector('h1')?.focus({ preventScroll: false });
  }
  window.scrollTo(0, 0);
  refresh();
}

function showRole() {
  const role = currentRole();
  document.body.dataset.role = role;
  const badge = document.querySelector('[data-testid="role"]');
  badge.hidden = role === 'none';
  badge.textContent = role === 'unknown' ? 'Token: role not recognised' : `Token: ${role}`;
  badge.title = role === 'unknown'
    ? 'The token names no role this page knows: every action is shown and the broker decides.'
    : '';
  document.getElementById('sign-out').hidden = role === 'none';
  document.getElementById('sign-in').textContent = role === 'none' ? 'Set token' : 'Change token';
}

function installHeader() {
  document.getElementById('sign-in').addEventListener('click', () => promptForToken());
  banner.addEventListener('click', (event) => {
    if (event.target.closest('[data-action="sign-in"]')) {
      promptForToken();
    }
  });
  document.getElementById('sign-out').addEventListener('click', forgetToken);
  document.getElementById('skip-link').addEventListener('click', (event) => {
    event.preventDefault();
    main.focus();
  });
}

function start() {
  installTokenDialog();
  installConfirmDialog();
  installHeader();
  showRole();
  if (!location.hash) {
    history.replaceState(null, '', '#/overview');
  }
  window.addEventListener('hashchange', () => navigate(true));
  document.addEventListener(REFRESH_EVENT, refresh);
  document.addEventListener(AUTH_EVENT, () => {
    // what the last token was shown is not this one's to see
    forgetHelperData();
    showRole();
    refresh();
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) {
      refresh();
    }
  });
  setInterval(() => {
    if (!document.hidden) {
      refresh();
    }
  }, REFRESH_MS);
  navigate(false);
}

start();
