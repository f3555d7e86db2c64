// One queue: its configuration, its partitions with the lag of every consumer group, its groups.

import { ApiError, api, enc, helperData } from '../api.js';
import { createGroupsTable, groupName, sortGroups } from '../groups-table.js';
import {
  card, errorBox, h, headerCell, link, pageHeader, patchContent, requestRefresh, setContent,
  syncRows, table, timeEl, toggleEmpty,
} from '../dom.js';
import { createPager } from '../controls.js';
import { duration, num } from '../format.js';

// partitions per page: the broker's default page of a queue detail
const PAGE = 100;

const PARTITION_COLUMNS = [
  { label: 'Partition' }, { label: 'Total', num: true }, { label: 'Pending', num: true },
  { label: 'In flight', num: true }, { label: 'Completed', num: true }, { label: 'Dead letters', num: true },
  { label: 'Oldest message' }, { label: 'Newest message' }, { label: 'Last activity' },
];

function configList(config) {
  const items = [
    ['Lease time', duration(config.leaseTime)],
    ['Retry limit', num(config.retryLimit)],
    ['Retry delay', `${num(config.retryDelay)} ms`],
    ['TTL', duration(config.ttl)],
    ['Max size', config.maxQueueSize ? num(config.maxQueueSize) : 'Unlimited'],
    ['Retention', config.retentionEnabled ? duration(config.retentionSeconds) : 'Off'],
  ];
  return h('dl', { class: 'facts', 'data-testid': 'queue-config' },
    items.map(([term, value]) => h('div', null, h('dt', null, term), h('dd', null, value))));
}

function totalsList(totals) {
  const items = [
    ['Total', totals.total], ['Pending', totals.pending], ['In flight', totals.processing],
    ['Completed', totals.completed], ['Dead letters', totals.deadLetter],
  ];
  return h('dl', { class: 'facts', 'data-testid': 'queue-totals' },
    items.map(([term, value]) => h('div', null, h('dt', null, term), h('dd', null, num(value)))));
}

function lagCell(lag) {
  if (!lag) {
    return h('td', { class: 'num muted', 'data-testid': 'lag' }, '—');
  }
  return h('td', { class: 'num', 'data-testid': 'lag', 'data-group': lag.group },
    num(lag.offsetLag),
    lag.timeLagSeconds ? h('small', { class: 'muted block' }, duration(lag.timeLagSeconds)) : null);
}

function renderPartition(queue, p) {
  const m = p.messages;
  const messages = `#/messages?queue=${enc(queue)}&partition=${enc(p.name)}`;
  return h('tr', { 'data-key': p.name },
    h('th', { scope: 'row' }, link(messages, p.name)),
    h('td', { class: 'num' }, num(m.total)),
    h('td', { class: 'num' }, num(m.pending)),
    h('td', { class: 'num' }, num(m.processing)),
    h('td', { class: 'num' }, num(m.completed)),
    h('td', { class: 'num' }, num(m.deadLetter)),
    h('td', null, timeEl(p.oldestMessage)),
    h('td', null, timeEl(p.newestMessage)),
    h('td', null, timeEl(p.lastActivity)),
    p.lags.map(lagCell));
}

/**
 * {group: {partitionName: cursor}} for the partitions shown, from every group reading the queue:
 * one request for the page's partitions (it was one per group, 4 s a refresh at 30 groups).
 */
async function partitionLags(queue, groups, partitions) {
  const lags = Object.fromEntries(groups.map((g) => [g.name, {}]));
  if (partitions.length === 0) {
    return lags;
  }
  const query = { partitionFrom: partitions[0].name, limit: PAGE };
  let cursors;
  try {
    cursors = await api(`/api/v1/resources/queues/${enc(queue)}/cursors`, { query });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      return lags; // deleted meanwhile: the page's own request says so at the next refresh
    }
    throw error;
  }
  for (const [group, list] of Object.entries(cursors.groups || {})) {
    if (lags[group]) {
      for (const cursor of list) {
        lags[group][cursor.partition] = { group, ...cursor };
      }
    }
  }
  return lags;
}

function lagHeaders(head, groupNames) {
  const cells = [...PARTITION_COLUMNS.map(headerCell),
    ...groupNames.map((name) => h('th', { scope: 'col', class: 'num' }, 'Lag: ', groupName(name)))];
  patchContent(head, cells);
}

/** The queue, the groups reading it and their lag per partition; null for an unknown queue. */
async function load(name, offset) {
  let detail;
  let groups;
  try {
    [detail, groups] = await Promise.all([
      api(`/api/v1/status/queues/${enc(name)}?limit=${PAGE}&offset=${offset}`),
      helperData('/api/v1/consumer-groups'),
    ]);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      return null;
    }
    throw error;
  }
  if (!groups) {
    return { detail, readers: null, lags: {} };
  }
  const readers = sortGroups(groups.filter((g) => g.queueName === name));
  return { detail, readers, lags: await partitionLags(name, readers, detail.partitions) };
}

export default function queuePage(name) {
  const partitions = table('partitions-table', `Partitions of ${name}`, PARTITION_COLUMNS);
  let offset = 0;
  const pager = createPager({
    testid: 'partitions-pager',
    prevLabel: '← Previous',
    nextLabel: 'Next →',
    onChange: (next) => { offset = next; requestRefresh(); },
  });
  const groups = createGroupsTable({ caption: `Consumer groups reading ${name}`, showQueue: false });
  const noGroups = h('p', { class: 'empty', hidden: true },
    'No consumer group reads this queue yet. Pop with ', h('code', null, '?consumerGroup=<name>'),
    ' (or without it, for queue mode) and it appears here.');
  const groupsUnknown = h('p', { class: 'empty', hidden: true, 'data-testid': 'groups-unknown' },
    'The consumer groups could not be read; retrying every 5 s.');
  const facts = h('div', { class: 'facts-row' });
  const meta = h('p', { class: 'muted small' });
  const body = h('div', null,
    h('div', { class: 'card' }, facts),
    card('Partitions', h('p', { class: 'muted small' },
      'Lag per consumer group: messages not yet consumed, and how old the oldest of them is.'),
      partitions.wrap, h('div', { class: 'toolbar' }, pager.el)),
    card('Consumer groups', groups.status, groups.wrap, noGroups, groupsUnknown));
  const notFound = h('div', { hidden: true });
  const el = h('section', { 'data-page': 'queue', class: 'page', 'data-queue': name },
    h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' }, link('#/queues', 'Queues'), ' / ', name),
    pageHeader(name, meta), notFound, body);

  function showNotFound() {
    body.hidden = true;
    notFound.hidden = false;
    setContent(notFound, errorBox([`Queue "${name}" does not exist (any more). `,
      link('#/queues', 'Back to the queues')]));
  }

  function show({ detail, readers: known, lags }) {
    const readers = known || [];
    body.hidden = false;
    notFound.hidden = true;
    const q = detail.queue;
    const scope = [q.namespace, q.task].filter(Boolean).join(' / ') || 'No namespace or task';
    patchContent(meta, scope, ' · created ', timeEl(q.createdAt));
    patchContent(facts, configList(q.config), totalsList(detail.totals.messages));
    lagHeaders(partitions.head, readers.map((g) => g.name));
    const rows = detail.partitions.map((p) => ({ ...p, lags: readers.map((g) => lags[g.name][p.name] || null) }));
    syncRows(partitions.tbody, rows, (p) => p.name, (p) => renderPartition(name, p));
    pager.update({ offset, limit: PAGE, count: rows.length, total: detail.pagination?.total ?? null });
    groups.update(readers);
    toggleEmpty(groups.wrap, noGroups, known !== null && readers.length === 0);
    groupsUnknown.hidden = known !== null;
  }

  async function refresh() {
    const data = await load(name, offset);
    if (data) {
      show(data);
    } else {
      showNotFound();
    }
  }

  return { title: name, el, refresh };
}
