// The filter bar of the messages page; its state lives in the address (#/messages?queue=...).

import { PAGE_SIZES, createTimeRange, field, select, syncOptions, uid } from '../controls.js';
import { h, patchContent } from '../dom.js';

const STATUSES = [['', 'Any status'], ['pending', 'Pending'], ['processing', 'Processing'],
  ['completed', 'Completed'], ['dead_letter', 'Dead letter']];

export function createMessageFilters(query, onChange) {
  const queue = select('messages-queue', [['', 'All queues']], query.get('queue'));
  const partitions = h('datalist', { id: uid('partitions') });
  const partition = h('input', {
    type: 'text', list: partitions.id, autocomplete: 'off', 'data-testid': 'messages-partition',
  });
  partition.value = query.get('partition') || '';
  // what was typed counts once committed (Enter, leaving the field, a suggestion chosen): read at
  // each 5 s refresh, a half-typed name filtered the page, at its old offset
  let partitionFilter = partition.value.trim();
  const commitPartition = () => { partitionFilter = partition.value.trim(); };
  partition.addEventListener('change', commitPartition);
  const status = select('messages-status', STATUSES, query.get('status'));
  const size = select('messages-page-size', PAGE_SIZES, query.get('limit') || '50');
  const range = createTimeRange({
    testid: 'messages', range: query.get('range') || '1h',
    from: query.get('from'), to: query.get('to'), onChange,
  });
  for (const control of [queue, partition, status, size]) {
    control.addEventListener('change', onChange);
  }
  const el = h('form', {
    class: 'filters', role: 'search', onsubmit: (e) => { e.preventDefault(); commitPartition(); onChange(); },
  },
    field('Queue', queue), field('Partition', partition), partitions,
    field('Status', status), range.el, field('Page size', size));

  return {
    el,
    queue: () => queue.value,
    limit: () => Number(size.value),
    /** The query of GET /api/v1/messages, without paging. */
    values() {
      return { queue: queue.value, partition: partitionFilter, status: status.value, ...range.values() };
    },
    /** The address form of the filters (presets stay relative). */
    state() {
      return {
        queue: queue.value, partition: partitionFilter, status: status.value,
        ...range.state(), limit: size.value === '50' ? '' : size.value,
      };
    },
    setChoices(queueNames, partitionNames) {
      syncOptions(queue, [['', 'All queues'], ...queueNames.map((name) => [name, name])]);
      patchContent(partitions, partitionNames.map((name) => h('option', { value: name })));
    },
  };
}
