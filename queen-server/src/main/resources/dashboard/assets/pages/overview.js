// Overview: throughput chart, headline numbers, broker health, top errors, maintenance switches.

import { ApiError, api, helperData } from '../api.js';
import { mayAdminister } from '../auth.js';
import { createChart } from '../chart.js';
import { h, card, pageHeader, patchContent, requestRefresh, setText, timeEl } from '../dom.js';
import { duration, num } from '../format.js';
import { createMaintenance } from './maintenance.js';

const RANGES = [['15', '15 min'], ['60', '1 hour'], ['360', '6 hours'], ['1440', '24 hours']];

function tile(testid, label) {
  const value = h('div', { class: 'tile-value' }, '—');
  const detail = h('div', { class: 'tile-detail' });
  const el = h('div', { class: 'tile', 'data-testid': testid },
    h('div', { class: 'tile-label' }, label), value, detail);
  return {
    el,
    set(text, detailContent = '', tone = '') {
      setText(value, text);
      patchContent(detail, detailContent);
      el.dataset.tone = tone;
    },
  };
}

function rangePicker(state) {
  const name = 'overview-range';
  return h('fieldset', { class: 'segmented' },
    h('legend', { class: 'visually-hidden' }, 'Time range'),
    RANGES.map(([minutes, label]) => {
      const input = h('input', {
        type: 'radio', name, value: minutes, id: `${name}-${minutes}`, checked: minutes === state.minutes,
        'data-testid': `range-${minutes}`,
        onchange: () => { state.minutes = minutes; requestRefresh(); },
      });
      return [input, h('label', { for: input.id }, label)];
    }));
}

/** The running bucket is drawn once this old (its counts arrive every few seconds). */
const RUNNING_BUCKET_MIN_MS = 20000;

/**
 * Per-second rates per bucket: missing buckets count as zero, the running bucket is divided by
 * the time elapsed in it (and left out while it is too young to say much).
 */
function chartPoints(status, now) {
  const bucketMs = status.bucketMinutes * 60000;
  const byTime = new Map(status.throughput.map((p) => [Date.parse(p.timestamp), p]));
  const from = Math.ceil(Date.parse(status.timeRange.from) / bucketMs) * bucketMs;
  const points = [];
  for (let t = from; t + RUNNING_BUCKET_MIN_MS <= now; t += bucketMs) {
    const p = byTime.get(t) || {};
    const seconds = Math.min(bucketMs, now - t) / 1000;
    points.push({
      t,
      values: {
        pushed: (p.ingested || 0) / seconds,
        popped: (p.popMessages || 0) / seconds,
        acked: (p.processed || 0) / seconds,
      },
    });
  }
  return points;
}

async function health() {
  try {
    return await api('/health');
  } catch (error) {
    if (error instanceof ApiError && error.status === 503 && error.body) {
      return error.body;
    }
    throw error;
  }
}

function oldestUnconsumed(lagging) {
  return lagging
    .filter((row) => row.oldest_unconsumed_at)
    .sort((a, b) => Date.parse(a.oldest_unconsumed_at) - Date.parse(b.oldest_unconsumed_at))[0];
}

function topErrors(list, errors) {
  if (!errors.length) {
    patchContent(list, h('li', { class: 'muted' },
      'No dead letters. Failed messages land here once a group exhausts its retries.'));
    return;
  }
  patchContent(list, errors.map((e) => h('li', null,
    h('span', { class: 'error-text' }, e.error || '(no error message)'),
    h('strong', { class: 'count' }, num(e.count)))));
}

function showHealth(tile, body) {
  const healthy = body.status === 'healthy';
  tile.set(healthy ? 'Healthy' : 'Unhealthy',
    `Database ${body.database || 'unknown'} · ${body.server || ''} ${body.version || ''}`,
    healthy ? 'ok' : 'error');
}

function showCounts(tiles, status) {
  const { messages, deadLetterQueue } = status;
  tiles.queues.set(num(status.queues.length), `${num(messages.total)} messages retained`);
  tiles.pending.set(num(messages.pending), `${num(status.leases.active)} active leases`);
  tiles.processing.set(num(messages.processing), `${num(messages.completed)} completed`);
  tiles.dead.set(num(deadLetterQueue.totalMessages),
    `${num(deadLetterQueue.affectedPartitions)} partitions affected`,
    deadLetterQueue.totalMessages ? 'error' : 'ok');
}

function showOldest(tile, lagging, now) {
  if (!lagging) {
    tile.set('Unknown', 'The lag could not be read; retrying', 'warn');
    return;
  }
  const oldest = oldestUnconsumed(lagging);
  if (!oldest) {
    tile.set('None', 'Every group is caught up', 'ok');
    return;
  }
  const at = oldest.oldest_unconsumed_at;
  tile.set(duration((now - Date.parse(at)) / 1000),
    [timeEl(at), ` · ${oldest.queue_name}/${oldest.partition_name}`], 'warn');
}

export default function overviewPage() {
  const state = { minutes: '60' };
  const tiles = {
    health: tile('stat-health', 'Broker'),
    queues: tile('stat-queues', 'Queues'),
    pending: tile('stat-pending', 'Pending messages'),
    processing: tile('stat-processing', 'In flight (leased)'),
    oldest: tile('stat-oldest', 'Oldest unconsumed'),
    dead: tile('stat-dlq', 'Dead letters'),
  };
  const chart = createChart({
    label: 'Messages pushed, popped and acknowledged per second',
    unit: '/s',
    series: [
      { key: 'pushed', name: 'Pushed', cls: 'a' },
      { key: 'popped', name: 'Popped', cls: 'b' },
      { key: 'acked', name: 'Acked', cls: 'c' },
    ],
  });
  const statsNote = h('p', { class: 'muted small' });
  const errors = h('ul', { class: 'error-list', 'data-testid': 'top-errors' });
  const maintenance = createMaintenance();
  const el = h('section', { 'data-page': 'overview', class: 'page' },
    pageHeader('Overview', statsNote),
    h('div', { class: 'tiles' }, Object.values(tiles).map((t) => t.el)),
    card('Throughput (messages per second)', rangePicker(state), chart.el),
    h('div', { class: 'columns' },
      card('Top dead-letter errors (among the latest 1,000)', errors, h('p', null, h('a', { href: '#/dlq' }, 'Browse dead letters →'))),
      maintenance.el));

  async function refresh() {
    const now = Date.now();
    const from = new Date(now - Number(state.minutes) * 60000).toISOString();
    const [healthBody, status, lagging] = await Promise.all([
      health(),
      api('/api/v1/status', { query: { from } }),
      // oldest first: the tile shows the first alone (it took 1,000 rows, 275 kB, every 5 s)
      helperData('/api/v1/consumer-groups/lagging',
        { query: { minLagSeconds: 0, limit: 1 } }),
      mayAdminister() ? maintenance.refresh() : null,
    ]);
    showHealth(tiles.health, healthBody);
    showCounts(tiles, status);
    showOldest(tiles.oldest, lagging, now);
    chart.update(chartPoints(status, now));
    topErrors(errors, status.deadLetterQueue.topErrors);
    setText(statsNote, status.statsAge === null
      ? 'Counts appear after the first statistics snapshot.'
      : `Counts from a statistics snapshot taken ${duration(status.statsAge)} ago.`);
  }

  return { title: 'Overview', el, refresh };
}
