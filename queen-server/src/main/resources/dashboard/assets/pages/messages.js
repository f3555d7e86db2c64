// Messages: browse by queue, partition, status and time, newest first, without payloads.

import { CHOICES_MS, api, enc, helperData } from '../api.js';
import { createPager, replaceQuery } from '../controls.js';
import {
  h, link, pageHeader, requestRefresh, setText, syncRows, table, timeEl, toggleEmpty,
} from '../dom.js';
import { num } from '../format.js';
import { createMessageFilters } from './messages-filters.js';

const STATUS_TONES = { pending: 'neutral', processing: 'info', completed: 'ok', dead_letter: 'error' };

const COLUMNS = [
  { label: 'Created' }, { label: 'Queue / partition' }, { label: 'Transaction ID' }, { label: 'Status' },
  { label: 'Consumed by' }, { label: 'Trace ID' }, { label: 'Lease expires' },
];

export function statusBadge(status) {
  const text = (status || 'unknown').replace('_', ' ');
  return h('span', { class: `badge badge-${STATUS_TONES[status] || 'neutral'}` }, text);
}

function consumedBy(m) {
  const bus = m.busStatus || {};
  if (bus.totalGroups) {
    return `${num(bus.consumedBy)} of ${num(bus.totalGroups)} group(s)`;
  }
  return m.queueStatus ? `queue mode: ${m.queueStatus.replace('_', ' ')}` : '—';
}

function renderRow(m) {
  const detail = `#/messages/${enc(m.partitionId)}/${enc(m.transactionId)}`;
  return h('tr', { 'data-key': `${m.partitionId}|${m.transactionId}` },
    h('td', null, timeEl(m.createdAt)),
    h('td', { class: 'nowrap' }, link(`#/queues/${enc(m.queue)}`, m.queue), ' / ', m.partition),
    h('th', { scope: 'row' }, link(detail, h('code', null, m.transactionId))),
    h('td', null, statusBadge(m.status)),
    h('td', null, consumedBy(m)),
    h('td', null, m.traceId ? h('code', { class: 'small' }, m.traceId) : '—'),
    h('td', null, timeEl(m.leaseExpiresAt)));
}

function emptyContent() {
  return h('p', null, 'No messages in this time range. Widen the time range, clear a filter, or push one: ',
    h('code', null, `curl -X POST ${location.origin}/api/v1/push -H 'Content-Type: application/json' `
      + '-d \'{"items":[{"queue":"orders","payload":{"hello":"world"}}]}\''));
}

async function partitionNames(queue) {
  if (!queue) {
    return [];
  }
  const detail = await helperData(`/api/v1/resources/queues/${enc(queue)}`, { maxAgeMs: CHOICES_MS });
  return (detail?.partitions || []).map((p) => p.name);
}

export default function messagesPage(query) {
  let offset = Number(query.get('offset')) || 0;
  const saveQuery = () => replaceQuery('messages', { ...filters.state(), offset: offset || '' });
  // past the first page the time range stays where the first page last had it: newest first, each
  // push since shifted the later pages (rows shown twice, or never on a busy queue); the oldest end
  // with it, or a preset's would pass the pinned newest end and every refresh failed
  let firstPage = null;
  let pinned = null;
  const goTo = (next) => {
    pinned = next > 0 ? pinned ?? firstPage : null;
    offset = next;
    saveQuery();
    requestRefresh();
  };
  const filters = createMessageFilters(query, () => goTo(0));
  const t = table('messages-table', 'Messages', COLUMNS);
  // the broker's offset cap (MessageRoutes)
  const pager = createPager({ testid: 'messages-pager', onChange: goTo, maxOffset: 100_000 });
  const summary = h('p', { class: 'muted small', 'aria-live': 'polite' });
  const empty = h('div', { class: 'empty', 'data-testid': 'empty', hidden: true }, emptyContent());
  const el = h('section', { 'data-page': 'messages', class: 'page' },
    pageHeader('Messages', summary), filters.el,
    h('div', { class: 'toolbar' }, pager.el),
    h('div', { class: 'card flush' }, t.wrap, empty));

  async function refresh() {
    const limit = filters.limit();
    const asked = filters.values();
    // a custom range has its own newest end
    const range = asked.to ? {} : { from: asked.from, to: new Date().toISOString() };
    if (offset === 0) {
      firstPage = range;
    } else {
      pinned ??= range;
    }
    const held = offset > 0 ? pinned : {};
    const [page, queues, partitions] = await Promise.all([
      api('/api/v1/messages', { query: { ...asked, ...held, limit, offset } }),
      helperData('/api/v1/resources/queues', { fallback: { queues: [] }, maxAgeMs: CHOICES_MS }),
      partitionNames(filters.queue()),
    ]);
    filters.setChoices(queues.queues.map((q) => q.name).sort(), partitions);
    syncRows(t.tbody, page.messages, (m) => `${m.partitionId}|${m.transactionId}`, renderRow);
    toggleEmpty(t.wrap, empty, page.messages.length === 0);
    // by the log's rows read: a page short of a deleted message is not the last
    pager.update({ offset, limit, count: page.rows ?? page.messages.length, total: null });
    const mode = page.mode?.type && page.mode.type !== 'none' ? ` Consumption mode: ${page.mode.type}.` : '';
    setText(summary, `Newest first; payloads on the detail page.${mode}`);
  }

  return { title: 'Messages', el, refresh };
}
