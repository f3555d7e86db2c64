// Small DOM helpers: element creation, in-place table updates, times, badges and messages.

import { DASH, dateTime, toDate } from './format.js';

export const REFRESH_EVENT = 'queen:refresh';

/** Asks the app to refresh the current page now (after an action, or a filter change). */
export function requestRefresh() {
  document.dispatchEvent(new Event(REFRESH_EVENT));
}

function appendAll(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    el.append(child instanceof Node ? child : String(child));
  }
}

/**
 * Creates an element. Props: `class`, `on<event>` listeners, attributes (true = present,
 * false/null = absent). Children: nodes, strings, numbers, nested arrays.
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      el.className = value;
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  appendAll(el, children);
  return el;
}

export function setContent(el, ...children) {
  el.replaceChildren();
  appendAll(el, children);
}

/** Replaces the children only when the new content differs (no flicker, no lost focus). */
export function patchContent(el, ...children) {
  const fresh = h('div', null, ...children);
  if (fresh.innerHTML !== el.innerHTML) {
    el.replaceChildren(...fresh.childNodes);
  }
}

export function setText(el, text) {
  if (el.textContent !== text) {
    el.textContent = text;
  }
}

/** A <time> in the viewer's zone with the UTC ISO value on hover; a dash when absent. */
export function timeEl(iso, text) {
  const date = toDate(iso);
  if (!date) {
    return DASH;
  }
  const utc = date.toISOString();
  return h('time', { datetime: utc, title: utc }, text ?? dateTime(date));
}

export function badge(text, tone = 'neutral') {
  return h('span', { class: `badge badge-${tone}` }, text);
}

export function link(href, ...children) {
  return h('a', { href }, ...children);
}

/** A message near an action: role=alert for errors, role=status otherwise. */
export function flash(el, message, tone = 'ok') {
  el.className = `flash flash-${tone}`;
  el.setAttribute('role', tone === 'error' ? 'alert' : 'status');
  el.textContent = message;
  el.hidden = !message;
}

export function flashArea(testid) {
  return h('p', { class: 'flash', 'data-testid': testid, hidden: true });
}

/**
 * A table in a horizontally scrolling wrapper. Columns: {label, num?, requires?}.
 * `requires` ('write' | 'admin') hides the column for roles that may not act.
 */
export function table(testid, caption, columns) {
  const tbody = h('tbody');
  const head = h('tr', null, columns.map(headerCell));
  const el = h('table', { 'data-testid': testid },
    h('caption', { class: 'visually-hidden' }, caption), h('thead', null, head), tbody);
  const wrap = h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': caption }, el);
  return { wrap, table: el, head, tbody };
}

export function headerCell(column) {
  return h('th', {
    scope: 'col',
    class: column.num ? 'num' : null,
    'data-requires': column.requires,
  }, column.label);
}

const rowState = new WeakMap();

/** The item a table row currently shows (for delegated click handlers). */
export function rowItem(tr) {
  return rowState.get(tr)?.item;
}

function patchRow(tr, fresh) {
  tr.className = fresh.className;
  const oldCells = [...tr.cells];
  const newCells = [...fresh.cells];
  if (oldCells.length !== newCells.length) {
    tr.replaceChildren(...newCells);
    return;
  }
  newCells.forEach((cell, i) => {
    if (cell.outerHTML !== oldCells[i].outerHTML) {
      oldCells[i].replaceWith(cell);
    }
  });
}

/**
 * Brings a tbody in line with `items`, in place: rows are matched by `keyOf`, a row whose item did
 * not change is left alone, a changed row has only its changed cells replaced, rows are moved only
 * when the order changed, and every row not matched this round is removed (keys should be unique;
 * a repeated key still gets one row per item). `render(item)` builds a <tr>.
 */
export function syncRows(tbody, items, keyOf, render) {
  const existing = new Map();
  for (const tr of tbody.rows) {
    const key = rowState.get(tr)?.key;
    existing.set(key, [...(existing.get(key) || []), tr]);
  }
  const matched = new Set();
  let cursor = tbody.firstElementChild;
  for (const item of items) {
    const key = keyOf(item);
    const sig = JSON.stringify(item);
    let tr = existing.get(key)?.shift();
    if (!tr) {
      tr = render(item);
    } else if (rowState.get(tr).sig !== sig) {
      patchRow(tr, render(item));
    }
    rowState.set(tr, { key, sig, item });
    matched.add(tr);
    if (tr === cursor) {
      cursor = cursor.nextElementSibling;
    } else {
      tbody.insertBefore(tr, cursor);
    }
  }
  for (const tr of [...tbody.rows]) {
    if (!matched.has(tr)) {
      tr.remove();
    }
  }
}

/** Shows the table or the empty state, whichever applies. */
export function toggleEmpty(wrap, empty, isEmpty) {
  wrap.hidden = isEmpty;
  empty.hidden = !isEmpty;
}

export function pageHeader(title, ...extra) {
  return h('div', { class: 'page-header' },
    h('h1', { tabindex: '-1' }, title), ...extra);
}

export function card(title, ...children) {
  return h('section', { class: 'card', 'aria-label': title },
    h('h2', { class: 'card-title' }, title), ...children);
}

export function errorBox(message) {
  return h('div', { class: 'notice notice-error', role: 'alert' }, message);
}
