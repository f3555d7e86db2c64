// Numbers, times and durations as the viewer reads them (their locale and time zone).

export const DASH = '—';

const integerFormat = new Intl.NumberFormat();
const rateFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
const fullFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: '2-digit',
  hour: '2-digit', minute: '2-digit', second: '2-digit',
});
const thisYearFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
});
const clockFormat = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit', minute: '2-digit', second: '2-digit',
});
const shortClockFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

function isNumber(value) {
  return value !== null && value !== undefined && value !== '' && Number.isFinite(Number(value));
}

export function num(value) {
  return isNumber(value) ? integerFormat.format(Number(value)) : DASH;
}

export function rate(value) {
  return isNumber(value) ? rateFormat.format(Number(value)) : DASH;
}

export function toDate(iso) {
  if (!iso) {
    return null;
  }
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Today: the time only; this year: without the year; otherwise the full date and time. */
export function dateTime(date) {
  const now = new Date();
  if (date.toDateString() === now.toDateString()) {
    return clockFormat.format(date);
  }
  return (date.getFullYear() === now.getFullYear() ? thisYearFormat : fullFormat).format(date);
}

export function clock(date) {
  return clockFormat.format(date);
}

export function shortClock(date) {
  return shortClockFormat.format(date);
}

/** Seconds as "45s", "3m 12s", "4h 5m", "2d 3h". */
export function duration(seconds) {
  if (!isNumber(seconds)) {
    return DASH;
  }
  const s = Math.max(0, Math.round(Number(seconds)));
  if (s < 60) {
    return `${s}s`;
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)}m ${s % 60}s`;
  }
  if (s < 86400) {
    return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  }
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function prettyJson(value) {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

/** One line of JSON, cut to `max` characters. */
export function preview(value, max = 90) {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function pad(n) {
  return String(n).padStart(2, '0');
}

/** A Date as the value of an <input type="datetime-local"> in the viewer's time zone. */
export function toLocalInput(date) {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
    + `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** The UTC ISO string of a datetime-local value, or '' when it is empty or invalid. */
export function fromLocalInput(value) {
  if (!value) {
    return '';
  }
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}
