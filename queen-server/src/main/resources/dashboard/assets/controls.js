// Form controls shared by the browsing pages: labelled fields, time ranges, pagers, filter URLs.

import { h } from './dom.js';
import { fromLocalInput, num, toLocalInput } from './format.js';

let nextId = 0;

export function uid(prefix) {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

/** A label bound to its control (the control gets an id when it has none). */
export function field(label, control, hint) {
  if (!control.id) {
    control.id = uid('field');
  }
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control,
    hint ? h('small', { class: 'hint' }, hint) : null);
}

/** Replaces a select's options only when they changed; the chosen value is kept. */
export function syncOptions(select, options) {
  const value = select.value;
  const wanted = options.some(([v]) => v === value) || !value ? options : [...options, [value, value]];
  const current = [...select.options].map((o) => [o.value, o.textContent]);
  if (JSON.stringify(current) !== JSON.stringify(wanted)) {
    select.replaceChildren(...wanted.map(([v, label]) => h('option', { value: v }, label)));
    select.value = value;
  }
}

/** A select with `value` chosen (added as an option when it is not one yet). */
export function select(testid, options, value) {
  const known = !value || options.some(([v]) => v === value);
  const all = known ? options : [...options, [value, value]];
  const el = h('select', { 'data-testid': testid },
    all.map(([v, label]) => h('option', { value: v }, label)));
  el.value = value || options[0][0];
  return el;
}

const PRESETS = {
  '15m': ['Last 15 minutes', 15],
  '1h': ['Last hour', 60],
  '6h': ['Last 6 hours', 360],
  '24h': ['Last 24 hours', 1440],
  '7d': ['Last 7 days', 10080],
};

/**
 * A time-range picker: presets plus a custom from/to in the viewer's zone.
 * `anyLabel` adds an "any time" choice (value ''). values() gives {from, to} as UTC ISO strings.
 */
export function createTimeRange({ testid, anyLabel, range, from, to, onChange }) {
  const options = [
    ...(anyLabel ? [['', anyLabel]] : []),
    ...Object.entries(PRESETS).map(([value, [label]]) => [value, label]),
    ['custom', 'Custom range'],
  ];
  const choice = select(`${testid}-range`, options, range);
  const fromInput = h('input', { type: 'datetime-local', step: '1', 'data-testid': `${testid}-from` });
  const toInput = h('input', { type: 'datetime-local', step: '1', 'data-testid': `${testid}-to` });
  fromInput.value = from ? toLocalInput(new Date(from)) : '';
  toInput.value = to ? toLocalInput(new Date(to)) : '';
  const custom = h('div', { class: 'field-group' },
    field('From (your time)', fromInput), field('To (your time)', toInput));
  const showCustom = () => { custom.hidden = choice.value !== 'custom'; };
  showCustom();
  choice.addEventListener('change', () => { showCustom(); onChange(); });
  fromInput.addEventListener('change', onChange);
  toInput.addEventListener('change', onChange);
  return {
    el: h('div', { class: 'field-group' }, field('Time range', choice), custom),
    values() {
      if (choice.value === 'custom') {
        return { from: fromLocalInput(fromInput.value), to: fromLocalInput(toInput.value) };
      }
      const minutes = PRESETS[choice.value]?.[1];
      return { from: minutes ? new Date(Date.now() - minutes * 60000).toISOString() : '', to: '' };
    },
    state() {
      return choice.value === 'custom'
        ? { range: 'custom', ...this.values() }
        : { range: choice.value };
    },
  };
}

/** Previous/next buttons and "1–50 of 213". `total` may be unknown (null). */
export function createPager({
  testid, onChange, prevLabel = '← Newer', nextLabel = 'Older →', maxOffset = Infinity,
}) {
  const label = h('span', { class: 'pager-label', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', 'data-testid': `${testid}-prev` }, prevLabel);
  const next = h('button', { type: 'button', 'data-testid': `${testid}-next` }, nextLabel);
  let state = { offset: 0, limit: 50, count: 0 };
  // a page of dead letters may end early at the broker's byte budget: "next" goes on from what
  // this page showed, and "back" returns to the offsets it came through
  const passed = [];
  // the offset the buttons went to: a page moved otherwise (a filter, a jump to the last page after
  // requeues) makes the offsets passed meaningless, and "back" landed off the page boundaries
  let went = null;
  const go = (target) => {
    went = target;
    onChange(target);
  };
  prev.addEventListener('click', () => {
    const back = passed.length ? passed.pop() : state.offset - state.limit;
    go(Math.max(0, Math.min(back, state.offset - 1)));
  });
  next.addEventListener('click', () => {
    passed.push(state.offset);
    go(state.offset + state.count);
  });
  return {
    el: h('nav', { class: 'pager', 'aria-label': 'Pages', 'data-testid': testid }, prev, label, next),
    update({ offset, limit, count, total }) {
      if (offset !== state.offset && offset !== went) {
        passed.length = 0;
      }
      went = null;
      state = { offset, limit, count };
      const first = count ? offset + 1 : 0;
      const range = count ? `${num(first)}–${num(offset + count)}` : 'None';
      const text = total === null || total === undefined ? range : `${range} of ${num(total)}`;
      if (label.textContent !== text) {
        label.textContent = text;
      }
      prev.disabled = offset === 0;
      // the broker refuses an offset past maxOffset: the filters narrow what lies beyond
      next.disabled = offset + count > maxOffset
        || (total === null || total === undefined ? count < limit : offset + count >= total);
    },
  };
}

/** Keeps a page's filters in the address (no navigation, no history entry). */
export function replaceQuery(section, values) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value !== '' && value !== null && value !== undefined) {
      query.set(key, String(value));
    }
  }
  const text = query.toString();
  history.replaceState(null, '', `#/${section}${text ? `?${text}` : ''}`);
}

export const PAGE_SIZES = [['25', '25 per page'], ['50', '50 per page'], ['100', '100 per page']];
