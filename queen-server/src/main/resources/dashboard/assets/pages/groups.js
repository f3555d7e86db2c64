// Consumer groups: every (group, queue) pair with state and lag; seek and delete actions.

import { api } from '../api.js';
import { field, replaceQuery } from '../controls.js';
import { createGroupsTable } from '../groups-table.js';
import { h, pageHeader, patchContent, setText, toggleEmpty } from '../dom.js';
import { num } from '../format.js';

function matches(g, text) {
  const needle = text.trim().toLowerCase();
  return !needle || g.name.toLowerCase().includes(needle) || g.queueName.toLowerCase().includes(needle);
}

export default function groupsPage(query) {
  const groups = createGroupsTable({ caption: 'Consumer groups' });
  const search = h('input', {
    type: 'search', 'data-testid': 'groups-filter', placeholder: 'e.g. billing or orders', autocomplete: 'off',
  });
  search.value = query.get('q') || '';
  const empty = h('div', { class: 'empty', hidden: true });
  const summary = h('p', { class: 'muted small', 'aria-live': 'polite' });
  const el = h('section', { 'data-page': 'groups', class: 'page' },
    pageHeader('Consumer groups', summary),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      field('Filter by group or queue', search)),
    h('div', { class: 'card flush' }, groups.status, groups.wrap, empty));
  let all = [];

  function render() {
    const shown = all.filter((g) => matches(g, search.value));
    groups.update(shown);
    toggleEmpty(groups.wrap, empty, shown.length === 0);
    patchContent(empty, all.length
      ? h('p', null, `No consumer group matches "${search.value}".`)
      : h('p', null, 'No consumer groups yet. A group appears on its first pop, e.g. ',
        h('code', null, `curl '${location.origin}/api/v1/pop/queue/orders?consumerGroup=billing&batch=10'`)));
    const lagging = all.filter((g) => g.state !== 'Stable').length;
    setText(summary, `${num(all.length)} group/queue pair(s), ${num(lagging)} lagging.`);
  }

  search.addEventListener('input', () => {
    replaceQuery('groups', { q: search.value.trim() });
    render();
  });

  async function refresh() {
    all = await api('/api/v1/consumer-groups');
    render();
  }

  return { title: 'Consumer groups', el, refresh };
}
