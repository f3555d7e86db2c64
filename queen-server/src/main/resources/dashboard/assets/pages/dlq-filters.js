// The filter bar of the dead-letters page; its state lives in the address (#/dlq?queue=...).

import { PAGE_SIZES, createTimeRange, field, select, syncOptions } from '../controls.js';
import { h } from '../dom.js';
import { QUEUE_MODE } from '../groups-table.js';

export function createDlqFilters(query, onChange) {
  const queue = select('dlq-queue', [['', 'All queues']], query.get('queue'));
  const group = select('dlq-group', [['', 'All groups']], query.get('consumerGroup'));
  const partition = h('input', { type: 'text', 'data-testid': 'dlq-partition', autocomplete: 'off' });
  partition.value = query.get('partition') || '';
  // what was typed counts once committed (Enter, leaving the field): read at each 5 s refresh, a
  // half-typed name filtered the page, at its old offset
  let partitionFilter = partition.value.trim();
  const commitPartition = () => { partitionFilter = partition.value.trim(); };
  partition.addEventListener('change', commitPartition);
  const size = select('dlq-page-size', PAGE_SIZES, query.get('limit') || '50');
  const range = createTimeRange({
    testid: 'dlq', anyLabel: 'Any time', range: query.get('range') || '',
    from: query.get('from'), to: query.get('to'), onChange,
  });
  for (const control of [queue, group, partition, size]) {
    control.addEventListener('change', onChange);
  }
  const el = h('form', {
    class: 'filters', role: 'search', onsubmit: (e) => { e.preventDefault(); commitPartition(); onChange(); },
  },
    field('Queue', queue), field('Consumer group', group), field('Partition', partition),
    range.el, field('Page size', size));

  /** The query of GET /api/v1/dlq, without paging. */
  function values() {
    return {
      queue: queue.value, consumerGroup: group.value, partition: partitionFilter, ...range.values(),
    };
  }

  return {
    el,
    values,
    limit: () => Number(size.value),
    isFiltered: () => Object.values(values()).some(Boolean),
    /** The address form of the filters (presets stay relative). */
    state() {
      return {
        queue: queue.value, consumerGroup: group.value, partition: partitionFilter,
        ...range.state(), limit: size.value === '50' ? '' : size.value,
      };
    },
    describe() {
      const f = values();
      const parts = [f.queue && `queue ${f.queue}`, f.consumerGroup && `group ${f.consumerGroup}`,
        f.partition && `partition ${f.partition}`,
        f.from && `failed after ${new Date(f.from).toLocaleString()}`,
        f.to && `failed before ${new Date(f.to).toLocaleString()}`].filter(Boolean);
      return parts.length ? parts.join(', ') : 'no filter (all dead letters)';
    },
    setChoices(queues, groups) {
      syncOptions(queue, [['', 'All queues'], ...queues.map((q) => [q.name, q.name])]);
      const names = [...new Set(groups.map((g) => g.name))].sort();
      syncOptions(group, [['', 'All groups'],
        ...names.map((n) => [n, n === QUEUE_MODE ? `${n} (queue mode)` : n])]);
    },
  };
}
