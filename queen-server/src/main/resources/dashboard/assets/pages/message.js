// One message: payload, facts, status per consumer group, traces; requeue when dead-lettered.

import { ApiError, api, enc } from '../api.js';
import {
  card, errorBox, flash, flashArea, h, link, pageHeader, patchContent, requestRefresh, setContent,
  setText, syncRows, table, timeEl, toggleEmpty,
} from '../dom.js';
import { duration, num, prettyJson } from '../format.js';
import { QUEUE_MODE } from '../groups-table.js';
import { requeueOne } from '../requeue.js';
import { statusBadge } from './messages.js';

const GROUP_COLUMNS = [{ label: 'Consumer group' }, { label: 'Status' }, { label: 'Lease expires' }];
const TRACE_COLUMNS = [
  { label: 'Time' }, { label: 'Event' }, { label: 'Group' }, { label: 'Trace names' }, { label: 'Data' },
];

function modeText(mode) {
  return mode.busGroupsCount
    ? `${mode.type}: consumed by ${num(mode.consumedByGroups)} of ${num(mode.busGroupsCount)} groups`
    : mode.type;
}

function facts(m) {
  const items = [
    ['Queue', link(`#/queues/${enc(m.queue)}`, m.queue)],
    ['Partition', link(`#/messages?queue=${enc(m.queue)}&partition=${enc(m.partition)}`, m.partition)],
    ['Status', statusBadge(m.status)],
    ['Created', timeEl(m.createdAt)],
    ['Offset', num(m.offset)],
    ['Mode', modeText(m.mode)],
    ['Retries', num(m.retryCount)],
    ['Error', m.errorMessage || '—'],
    ['Trace ID', m.traceId ? h('code', null, m.traceId) : '—'],
    ['Producer', m.producerSub || '—'],
    ['Lease expires', timeEl(m.leaseExpiresAt)],
    ['Encrypted at rest', m.isEncrypted ? 'Yes' : 'No'],
    ['Lease time / retry limit', `${duration(m.queueConfig.leaseTime)} / ${num(m.queueConfig.retryLimit)}`],
  ];
  return h('dl', { class: 'facts', 'data-testid': 'message-facts' },
    items.map(([term, value]) => h('div', null, h('dt', null, term), h('dd', null, value))));
}

function renderGroup(g) {
  return h('tr', { 'data-key': g.name },
    h('th', { scope: 'row' }, g.name === QUEUE_MODE ? 'Queue mode' : g.name),
    h('td', null, statusBadge(g.status)),
    h('td', null, timeEl(g.leaseExpiresAt)));
}

function renderTrace(t) {
  return h('tr', { 'data-key': t.id },
    h('td', null, timeEl(t.created_at)),
    h('td', null, t.event_type),
    h('td', null, t.consumer_group === QUEUE_MODE ? 'queue mode' : t.consumer_group || '—'),
    h('td', null, (t.trace_names || []).join(', ') || '—'),
    h('td', { class: 'payload' }, h('pre', null, prettyJson(t.data))));
}

export default function messagePage(partitionId, transactionId) {
  const payload = h('pre', { class: 'payload-view', 'data-testid': 'payload', tabindex: '0' });
  const groups = table('message-groups-table', 'Status per consumer group', GROUP_COLUMNS);
  const noGroups = h('p', { class: 'empty', hidden: true }, 'No consumer group has read this partition yet.');
  const traces = table('traces-table', 'Traces', TRACE_COLUMNS);
  const noTraces = h('p', { class: 'empty', hidden: true },
    'No traces. Consumers record them with POST /api/v1/traces (msg.trace() in the JS client).');
  const factsBox = h('div');
  const meta = h('p', { class: 'muted small' });
  const status = flashArea('message-status');
  const requeue = h('button', {
    type: 'button', 'data-action': 'requeue', 'data-requires': 'write', hidden: true,
  }, 'Requeue dead letter');
  const body = h('div', null,
    h('div', { class: 'toolbar' }, requeue), status,
    h('div', { class: 'card' }, factsBox),
    card('Payload', payload),
    card('Consumer groups', groups.wrap, noGroups),
    card('Traces', traces.wrap, noTraces));
  const notFound = h('div', { hidden: true });
  const el = h('section', { 'data-page': 'message', class: 'page', 'data-key': `${partitionId}|${transactionId}` },
    h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' }, link('#/messages', 'Messages'), ' / ', transactionId),
    pageHeader('Message', meta),
    notFound, body);
  let current = null;

  requeue.addEventListener('click', async () => {
    const message = await requeueOne(current);
    if (message) {
      flash(status, message);
      requestRefresh();
    }
  });

  function showNotFound(error) {
    body.hidden = true;
    notFound.hidden = false;
    setContent(notFound, errorBox([`${error.message}. It may have been removed by retention or deleted. `,
      link('#/messages', 'Back to the messages')]));
  }

  async function refresh() {
    let m;
    try {
      m = await api(`/api/v1/messages/${enc(partitionId)}/${enc(transactionId)}`);
    } catch (error) {
      if (error instanceof ApiError && (error.status === 404 || error.status === 400)) {
        showNotFound(error);
        return;
      }
      throw error;
    }
    current = m;
    body.hidden = false;
    notFound.hidden = true;
    setText(meta, `${m.queuePath} · offset ${num(m.offset)}`);
    patchContent(factsBox, facts(m));
    setText(payload, prettyJson(m.payload));
    requeue.hidden = !m.consumerGroups.some((g) => g.status === 'dead_letter');
    syncRows(groups.tbody, m.consumerGroups, (g) => g.name, renderGroup);
    toggleEmpty(groups.wrap, noGroups, m.consumerGroups.length === 0);
    const list = m.traces || [];
    syncRows(traces.tbody, list, (t) => t.id, renderTrace);
    toggleEmpty(traces.wrap, noTraces, list.length === 0);
  }

  return { title: `Message ${transactionId}`, el, refresh };
}
