// Dead letters: filter by queue, group, partition and time of failure; payload and error; requeue.

import { CHOICES_MS, api, enc, helperData } from '../api.js';
import { createPager, replaceQuery } from '../controls.js';
import {
  flash, flashArea, h, link, pageHeader, patchContent, requestRefresh, rowItem, setText, syncRows,
  table, timeEl, toggleEmpty,
} from '../dom.js';
import { num, prettyJson, preview } from '../format.js';
import { QUEUE_MODE } from '../groups-table.js';
import { requeueMatching, requeueOne } from '../requeue.js';
import { createDlqFilters } from './dlq-filters.js';

const COLUMNS = [
  { label: 'Failed at' }, { label: 'Queue / partition' }, { label: 'Group' }, { label: 'Error' },
  { label: 'Retries', num: true }, { label: 'Payload' }, { label: 'Message' },
  { label: 'Actions', requires: 'write' },
];

/** Rows are told apart by group too: two groups may dead-letter the same message. */
function letterKey(m) {
  return `${m.partitionId}|${m.transactionId}|${m.consumerGroup}`;
}

function renderRow(m) {
  return h('tr', { 'data-key': letterKey(m) },
    h('td', null, timeEl(m.failedAt)),
    h('td', { class: 'nowrap' }, link(`#/queues/${enc(m.queue)}`, m.queue), ' / ', m.partition),
    h('td', null, m.consumerGroup === QUEUE_MODE ? h('small', { class: 'muted' }, 'queue mode') : m.consumerGroup),
    h('td', { class: 'error-text' }, m.errorMessage || h('span', { class: 'muted' }, '(none)')),
    h('td', { class: 'num' }, num(m.retryCount)),
    h('td', { class: 'payload' },
      m.payloadError
        ? h('span', { class: 'error-text' }, `Payload unreadable: ${m.payloadError}`)
        : h('details', null, h('summary', null, h('code', null, preview(m.data, 36))),
          h('pre', null, prettyJson(m.data)))),
    h('td', null, link(`#/messages/${enc(m.partitionId)}/${enc(m.transactionId)}`, 'Details')),
    h('td', { 'data-requires': 'write' },
      h('button', {
        type: 'button', class: 'small', 'data-action': 'requeue', 'data-requires': 'write',
        'aria-label': `Requeue ${m.transactionId}`,
      }, 'Requeue')));
}

function emptyText(filtered) {
  return filtered
    ? 'No dead letters match these filters. Widen the time range or clear a filter.'
    : 'No dead letters. A message lands here when a consumer acks it as failed beyond the '
      + 'queue\'s retryLimit, or acks it with status "dlq".';
}

export default function dlqPage(query) {
  let offset = Number(query.get('offset')) || 0;
  let total = 0;
  // what the shown count counted (its filter, and its newest letter when the page shows the
  // first): a requeue of them all acts on that, not on filters changed since
  let shown = { filter: {}, total: 0, description: '', newest: null };
  const saveQuery = () => replaceQuery('dlq', { ...filters.state(), offset: offset || '' });
  const goTo = (next) => { offset = next; saveQuery(); requestRefresh(); };
  const filters = createDlqFilters(query, () => goTo(0));
  const t = table('dlq-table', 'Dead letters', COLUMNS);
  // the broker's offset cap (DeadLetterRoutes)
  const pager = createPager({ testid: 'dlq-pager', onChange: goTo, maxOffset: 100_000 });
  const status = flashArea('dlq-status');
  const requeueAll = h('button', {
    type: 'button', 'data-action': 'requeue-all', 'data-requires': 'write',
  }, 'Requeue all matching');
  const summary = h('p', { class: 'muted small', 'aria-live': 'polite' });
  const empty = h('div', { class: 'empty', 'data-testid': 'empty', hidden: true });
  const el = h('section', { 'data-page': 'dlq', class: 'page' },
    pageHeader('Dead letters', summary), filters.el,
    h('div', { class: 'toolbar' }, requeueAll, pager.el), status,
    h('div', { class: 'card flush' }, t.wrap, empty));

  async function act(action) {
    const message = await action();
    if (message) {
      flash(status, message);
      requestRefresh();
    }
  }

  requeueAll.addEventListener('click', () => act(() => requeueMatching(shown.filter, shown.total, shown.description, shown.newest)));
  t.tbody.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action="requeue"]');
    const letter = button && rowItem(button.closest('tr'));
    if (letter) {
      act(() => requeueOne(letter));
    }
  });

  /** One page of dead letters; past the last page (after requeues) it moves to the last one. */
  async function fetchPage(limit, filter) {
    const page = await api('/api/v1/dlq', { query: { ...filter, limit, offset } });
    if (page.messages.length || offset === 0 || !page.total) {
      return page;
    }
    offset = Math.floor((page.total - 1) / limit) * limit;
    saveQuery();
    return api('/api/v1/dlq', { query: { ...filter, limit, offset } });
  }

  async function refresh() {
    const limit = filters.limit();
    const asked = { filter: filters.values(), description: filters.describe() };
    const [page, queues, groups] = await Promise.all([
      fetchPage(limit, asked.filter),
      helperData('/api/v1/resources/queues', { fallback: { queues: [] }, maxAgeMs: CHOICES_MS }),
      helperData('/api/v1/consumer-groups', { fallback: [], maxAgeMs: CHOICES_MS }),
    ]);
    total = page.total ?? page.messages.length;
    shown = {
      ...asked, total, newest: offset === 0 ? page.messages[0]?.failedAt ?? null : null,
    };
    filters.setChoices(queues.queues, groups);
    syncRows(t.tbody, page.messages, letterKey, renderRow);
    toggleEmpty(t.wrap, empty, page.messages.length === 0);
    patchContent(empty, h('p', null, emptyText(filters.isFiltered())));
    pager.update({ offset, limit, count: page.messages.length, total: page.total });
    requeueAll.disabled = total === 0;
    setText(requeueAll, total ? `Requeue all ${num(total)} matching` : 'Requeue all matching');
    setText(summary, `${num(total)} dead letter(s) ${filters.isFiltered() ? 'match the filters' : 'in all'}.`);
  }

  return { title: 'Dead letters', el, refresh };
}
