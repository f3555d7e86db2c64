// Queues: one row per queue with its counts, consumer groups and lag.

import { api, enc, helperData } from '../api.js';
import { h, link, pageHeader, setText, syncRows, table, toggleEmpty } from '../dom.js';
import { duration, num } from '../format.js';

const COLUMNS = [
  { label: 'Queue' }, { label: 'Partitions', num: true }, { label: 'Groups', num: true },
  { label: 'Total', num: true }, { label: 'Pending', num: true }, { label: 'In flight', num: true },
  { label: 'Completed', num: true }, { label: 'Dead letters', num: true },
  { label: 'Lag (messages)', num: true }, { label: 'Max time lag', num: true },
];

function emptyQueues() {
  const origin = location.origin;
  const command = `curl -X POST ${origin}/api/v1/push -H 'Content-Type: application/json' \\\n`
    + `  -d '{"items":[{"queue":"orders","partition":"p1","payload":{"hello":"world"}}]}'`;
  return h('div', { class: 'empty', 'data-testid': 'empty', hidden: true },
    h('h2', null, 'No queues yet'),
    h('p', null, 'Push a message and its queue is created on the spot:'),
    h('pre', null, h('code', null, command)));
}

function scope(q) {
  const parts = [q.namespace, q.task].filter(Boolean);
  return parts.length ? h('small', { class: 'muted block' }, parts.join(' / ')) : null;
}

function renderRow(q) {
  const m = q.messages;
  return h('tr', { 'data-key': q.name },
    h('th', { scope: 'row' }, link(`#/queues/${enc(q.name)}`, q.name), scope(q)),
    h('td', { class: 'num' }, num(q.partitions)),
    h('td', { class: 'num' }, num(q.groups)),
    h('td', { class: 'num' }, num(m.total)),
    h('td', { class: 'num' }, num(m.pending)),
    h('td', { class: 'num' }, num(m.processing)),
    h('td', { class: 'num' }, num(m.completed)),
    h('td', { class: 'num' }, m.deadLetter ? link(`#/dlq?queue=${enc(q.name)}`, num(m.deadLetter)) : '0'),
    h('td', { class: 'num', 'data-testid': 'lag' }, num(q.lagMessages)),
    h('td', { class: 'num' }, duration(q.maxLagSeconds)));
}

function groupCounts(groups) {
  const counts = new Map();
  for (const g of groups) {
    counts.set(g.queueName, (counts.get(g.queueName) || 0) + 1);
  }
  return counts;
}

export default function queuesPage() {
  const t = table('queues-table', 'Queues', COLUMNS);
  const empty = emptyQueues();
  const summary = h('p', { class: 'muted small' });
  const el = h('section', { 'data-page': 'queues', class: 'page' },
    pageHeader('Queues', summary),
    h('div', { class: 'card flush' }, t.wrap, empty));

  async function refresh() {
    const from = new Date(Date.now() - 60000).toISOString();
    const [status, groups] = await Promise.all([
      api('/api/v1/status', { query: { from } }),
      helperData('/api/v1/consumer-groups'),
    ]);
    // unknown ("—") while the groups cannot be read, never a count of 0
    const counts = groups && groupCounts(groups);
    const queues = status.queues
      .map((q) => ({ ...q, groups: counts ? counts.get(q.name) || 0 : null }))
      .sort((a, b) => a.name.localeCompare(b.name));
    syncRows(t.tbody, queues, (q) => q.name, renderRow);
    toggleEmpty(t.wrap, empty, queues.length === 0);
    setText(summary, `${num(queues.length)} queue(s). Counts come from a statistics snapshot`
      + (status.statsAge === null ? '.' : ` taken ${duration(status.statsAge)} ago.`));
  }

  return { title: 'Queues', el, refresh };
}
