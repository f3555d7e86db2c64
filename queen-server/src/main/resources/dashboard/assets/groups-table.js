// The consumer-groups table (one row per group and queue) with its seek and delete actions.
// Used by the consumer-groups page and by a queue's detail page.

import { api, enc } from './api.js';
import { field } from './controls.js';
import { confirmAction } from './dialogs.js';
import {
  badge, flash, flashArea, h, link, requestRefresh, rowItem, syncRows, table, timeEl,
} from './dom.js';
import { duration, fromLocalInput, num, toLocalInput } from './format.js';

export const QUEUE_MODE = '__QUEUE_MODE__';

const STATE_TONES = { Stable: 'ok', Lagging: 'warn', Dead: 'error' };

const groupKey = (g) => `${g.name}|${g.queueName}`;

export function sortGroups(groups) {
  return [...groups].sort((a, b) => a.name.localeCompare(b.name) || a.queueName.localeCompare(b.queueName));
}

export function groupName(name) {
  return name === QUEUE_MODE
    ? [h('code', null, name), ' ', h('small', { class: 'muted' }, '(queue mode)')]
    : name;
}

function base(g) {
  return `/api/v1/consumer-groups/${enc(g.name)}/queues/${enc(g.queueName)}`;
}

function actionButton(action, text, g, label, requires) {
  return h('button', {
    type: 'button', class: `small${action === 'delete-group' ? ' danger-outline' : ''}`,
    'data-action': action, 'data-requires': requires, 'aria-label': `${label} (${g.name} on ${g.queueName})`,
  }, text);
}

function subscription(g) {
  if (g.subscriptionTimestamp) {
    return [`${g.subscriptionMode || 'from'} `, timeEl(g.subscriptionTimestamp)];
  }
  return g.subscriptionMode || 'all';
}

function renderRow(g, showQueue) {
  return h('tr', { 'data-key': groupKey(g) },
    h('th', { scope: 'row' }, groupName(g.name)),
    showQueue ? h('td', null, link(`#/queues/${enc(g.queueName)}`, g.queueName)) : null,
    h('td', null, badge(g.state, STATE_TONES[g.state] || 'neutral')),
    h('td', { class: 'num' }, num(g.members)),
    h('td', { class: 'num' }, num(g.partitionsWithLag)),
    h('td', { class: 'num', 'data-testid': 'lag' }, num(g.totalLag)),
    h('td', { class: 'num' }, duration(g.maxTimeLag)),
    h('td', null, timeEl(g.lastConsumedAt)),
    h('td', null, subscription(g)),
    h('td', { class: 'actions', 'data-requires': 'write' },
      actionButton('seek-time', 'Seek to time', g, 'Seek to a time', 'write'),
      actionButton('seek-end', 'Seek to end', g, 'Seek to the end', 'write'),
      actionButton('delete-group', 'Delete', g, 'Delete consumer group', 'admin')));
}

function seekEnd(g) {
  return confirmAction({
    title: `Skip to the end of ${g.queueName}?`,
    body: h('p', null, 'Every cursor of group ', h('strong', null, g.name), ' on queue ',
      h('strong', null, g.queueName), ' moves to the newest message. The ', h('strong', null, num(g.totalLag)),
      ' messages it has not consumed yet will not be delivered to this group.'),
    confirmLabel: 'Seek to end',
    danger: true,
    action: async () => {
      const r = await api(`${base(g)}/seek`, { method: 'POST', body: { toEnd: true } });
      return `${g.name} on ${g.queueName}: ${num(r.partitionsUpdated)} partition cursor(s) moved to the end.`;
    },
  });
}

function seekTime(g) {
  const input = h('input', {
    type: 'datetime-local', step: '1', required: true, 'data-testid': 'seek-timestamp',
  });
  input.value = toLocalInput(new Date(Date.now() - 3600000));
  return confirmAction({
    title: `Seek ${g.name} on ${g.queueName} to a time`,
    body: [
      field('Time (your time zone)', input,
        'The messages created at or after this time are delivered again; earlier ones are '
          + 'skipped.'),
    ],
    confirmLabel: 'Seek',
    action: async () => {
      const timestamp = fromLocalInput(input.value);
      if (!timestamp) {
        throw new Error('Choose a date and time.');
      }
      const r = await api(`${base(g)}/seek`, { method: 'POST', body: { timestamp } });
      const when = new Date(timestamp).toLocaleString();
      return `${g.name} on ${g.queueName}: ${num(r.partitionsUpdated)} partition cursor(s) moved to ${when}.`;
    },
  });
}

function deleteGroup(g) {
  const everywhere = h('input', { type: 'checkbox', 'data-testid': 'delete-everywhere' });
  // queue mode has no subscription: its next pop reads every retained message again, on each queue
  const queueMode = g.name === QUEUE_MODE;
  return confirmAction({
    title: `Delete consumer group ${g.name}?`,
    body: [
      h('p', null, 'Removes the cursors and the subscription of ', h('strong', null, g.name), ' on ',
        h('strong', null, g.queueName), '. Its next pop starts like a new group\'s: ',
        h('strong', null, 'every retained message is delivered again'),
        queueMode ? ' to the consumers that pop without a consumer group.'
          : ' unless it pops with subscriptionMode=new.'),
      h('label', { class: 'check' }, everywhere, queueMode
        ? ' Delete queue mode on every queue (every queue\'s retained messages go out again)'
        : ` Delete ${g.name} on every queue it reads`),
    ],
    confirmLabel: 'Delete group',
    danger: true,
    action: async () => {
      const path = everywhere.checked ? `/api/v1/consumer-groups/${enc(g.name)}` : base(g);
      const r = await api(path, { method: 'DELETE' });
      const where = everywhere.checked ? 'every queue' : g.queueName;
      return `Deleted ${g.name} on ${where} (${num(r.deletedPartitions)} partition cursor(s)).`;
    },
  });
}

const ACTIONS = { 'seek-end': seekEnd, 'seek-time': seekTime, 'delete-group': deleteGroup };

async function onClick(event, status) {
  const button = event.target.closest('button[data-action]');
  const group = button && rowItem(button.closest('tr'));
  if (!group) {
    return;
  }
  const message = await ACTIONS[button.dataset.action](group);
  if (message) {
    flash(status, message);
    requestRefresh();
  }
  button.focus();
}

export function createGroupsTable({ caption, showQueue = true }) {
  const columns = [
    { label: 'Group' }, showQueue ? { label: 'Queue' } : null, { label: 'State' },
    { label: 'Partitions', num: true }, { label: 'Lagging', num: true },
    { label: 'Lag', num: true }, { label: 'Time lag', num: true },
    { label: 'Last consumed' }, { label: 'Subscription' }, { label: 'Actions', requires: 'write' },
  ].filter(Boolean);
  const t = table('groups-table', caption, columns);
  const status = flashArea('groups-status');
  t.tbody.addEventListener('click', (event) => onClick(event, status));
  return {
    status,
    wrap: t.wrap,
    update(groups) {
      syncRows(t.tbody, sortGroups(groups), groupKey, (g) => renderRow(g, showQueue));
    },
  };
}
