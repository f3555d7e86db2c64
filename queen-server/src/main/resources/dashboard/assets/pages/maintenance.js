// The maintenance switches (admin only): push maintenance and pop maintenance.

import { ApiError, api } from '../api.js';
import { confirmAction } from '../dialogs.js';
import { badge, card, flash, flashArea, h, requestRefresh, setContent, setText } from '../dom.js';
import { num } from '../format.js';

const SWITCHES = [
  {
    key: 'push',
    path: '/api/v1/system/maintenance',
    field: 'maintenanceMode',
    name: 'Push maintenance',
    on: 'Pushes are written to the brokers\' local buffers instead of PostgreSQL. '
      + 'Pops keep serving what is in the database.',
    off: 'Buffered pushes drain into the database.',
  },
  {
    key: 'pop',
    path: '/api/v1/system/maintenance/pop',
    field: 'popMaintenanceMode',
    name: 'Pop maintenance',
    on: 'Every pop of every broker answers 204 at once: consumers receive nothing.',
    off: 'Consumers receive messages again.',
  },
];

function toggle(sw, enabled, status) {
  return async () => {
    const turnOn = !enabled;
    const message = await confirmAction({
      title: `Turn ${sw.name.toLowerCase()} ${turnOn ? 'on' : 'off'}?`,
      body: h('p', null, turnOn ? sw.on : sw.off, ' This applies to every broker of the cluster.'),
      confirmLabel: turnOn ? 'Turn on' : 'Turn off',
      danger: turnOn,
      action: async () => {
        const r = await api(sw.path, { method: 'POST', body: { enabled: turnOn } });
        return r.message || `${sw.name} is ${turnOn ? 'on' : 'off'}.`;
      },
    });
    if (message) {
      flash(status, message);
      requestRefresh();
    }
  };
}

function switchRow(sw, enabled, status) {
  return h('div', { class: 'switch-row' },
    h('div', null,
      h('div', { class: 'switch-name' }, sw.name, ' ',
        h('span', { 'data-testid': `maintenance-${sw.key}-state` },
          enabled ? badge('On', 'warn') : badge('Off', 'ok'))),
      h('p', { class: 'muted small' }, sw.on)),
    h('button', {
      type: 'button',
      class: enabled ? '' : 'danger-outline',
      'data-action': `maintenance-${sw.key}`,
      'data-requires': 'admin',
      onclick: toggle(sw, enabled, status),
    }, enabled ? 'Turn off' : 'Turn on'));
}

/** A card that is hidden for non-admin tokens (the GET route is admin-only as well). */
export function createMaintenance() {
  const status = flashArea('maintenance-status');
  const rows = h('div', { class: 'switches' });
  const buffer = h('p', { class: 'muted small', 'data-testid': 'maintenance-buffer' });
  const el = card('Maintenance', status, rows, buffer);
  el.setAttribute('data-requires', 'admin');
  el.setAttribute('data-testid', 'maintenance');
  let shown = '';

  async function load() {
    try {
      return await api('/api/v1/system/maintenance');
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) {
        flash(status, error.describe(), 'error');
        return null;
      }
      throw error;
    }
  }

  async function refresh() {
    const m = await load();
    if (!m) {
      return;
    }
    const sig = JSON.stringify([m.maintenanceMode, m.popMaintenanceMode]);
    if (sig !== shown) {
      shown = sig;
      const focused = rows.contains(document.activeElement) && document.activeElement.dataset.action;
      setContent(rows, SWITCHES.map((sw) => switchRow(sw, Boolean(m[sw.field]), status)));
      if (focused) {
        rows.querySelector(`[data-action="${focused}"]`).focus();
      }
    }
    const health = m.bufferHealthy ? 'healthy' : 'unhealthy';
    setText(buffer, `${num(m.bufferedMessages)} messages in the local push buffer · buffer ${health}`);
  }

  return { el, refresh };
}
