// Requeueing dead letters: one, or every one matching a filter (one call per dead letter).

import { ApiError, api, enc } from './api.js';
import { confirmAction } from './dialogs.js';
import { h } from './dom.js';
import { num } from './format.js';

const PAGE = 1000;
const PARALLEL = 4;

function retryPath(partitionId, transactionId) {
  return `/api/v1/messages/${enc(partitionId)}/${enc(transactionId)}/retry`;
}

const explanation = 'A requeued message is appended to its partition again as a new message '
  + '(transaction id "<original>:requeued:<id>") and leaves the dead letters; every consumer group '
  + 'reading the partition receives it.';

/** Asks, then requeues one dead letter. Resolves with a success message, or null. */
export function requeueOne(letter) {
  return confirmAction({
    title: 'Requeue this dead letter?',
    body: [
      h('p', null, 'Message ', h('code', null, letter.transactionId), ' of ',
        h('strong', null, `${letter.queue}/${letter.partition}`), '.'),
      h('p', { class: 'muted' }, explanation),
    ],
    confirmLabel: 'Requeue',
    action: async () => {
      const r = await api(retryPath(letter.partitionId, letter.transactionId), { method: 'POST' });
      return `Requeued as ${r.requeuedTransactionId}.`;
    },
  });
}

/** The broker's answer for a dead letter requeued or removed meanwhile (not an unknown route). */
function alreadyGone(error) {
  const text = error.body?.error;
  return error.status === 404 && typeof text === 'string'
    && /\b(dead letter|message) not found\b/i.test(text);
}

/**
 * Requeues the letters, PARALLEL requests at a time, into `result`; a letter whose requeue failed is
 * marked `failed`. The first error that makes going on pointless (broker unreachable, 401, 403,
 * anything not from the broker) becomes `result.fatal`: no worker sends another request, and this
 * resolves once the requests in flight have ended.
 */
async function retryAll(letters, result, progress, stopped) {
  let next = 0;
  const halted = () => stopped() || result.fatal !== null;
  async function worker() {
    while (next < letters.length && !halted()) {
      const m = letters[next];
      next += 1;
      try {
        await api(retryPath(m.partitionId, m.transactionId), { method: 'POST' });
        result.done += 1;
      } catch (error) {
        if (!(error instanceof ApiError) || [0, 401, 403].includes(error.status)) {
          result.fatal ??= error;
        } else if (alreadyGone(error)) {
          result.gone += 1;
        } else {
          m.failed = true;
          result.failed.push(error);
        }
      }
      progress(`Requeued ${num(result.done)}…`);
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

/**
 * Requeues every dead letter matching the filter, a page at a time. The window is pinned to the
 * newest letter the count shown included (`newest`, its failedAt), else to the newest the run first
 * reads (the list is newest first): a requeued copy that fails again, or any letter failing since,
 * comes after it and is left for another run. Within it the
 * list only loses what was requeued, so a page is read past the rows that stay (the letters whose
 * requeue failed) and the offset grows by the failures alone: the list stops at offset 100,000,
 * and collecting every letter before requeueing any failed past it. At most `total` rows, the
 * count the user confirmed.
 */
async function requeuePages(filter, total, newest, progress, stopped) {
  const result = { done: 0, gone: 0, failed: [], fatal: null, finished: false };
  let window = newest ? pinned(filter, newest) : filter;
  let kept = 0;
  let seen = 0;
  try {
    while (!stopped() && result.fatal === null) {
      const page = await api('/api/v1/dlq', { query: { ...window, limit: PAGE, offset: kept } });
      if (window === filter && page.messages.length) {
        window = pinned(filter, page.messages[0].failedAt);
      }
      const rows = page.messages.slice(0, Math.max(total - seen, 0));
      if (!rows.length) {
        result.finished = true;
        return result;
      }
      seen += rows.length;
      // a letter dead-lettered in several groups is a row each, and one requeue
      const letters = new Map();
      for (const m of rows) {
        const key = `${m.partitionId}|${m.transactionId}`;
        const letter = letters.get(key)
          ?? { partitionId: m.partitionId, transactionId: m.transactionId, rows: 0 };
        letter.rows += 1;
        letters.set(key, letter);
      }
      await retryAll([...letters.values()], result, progress, stopped);
      for (const letter of letters.values()) {
        kept += letter.failed ? letter.rows : 0;
      }
    }
  } catch (error) {
    result.fatal = error; // a page the broker would not list: said with what was done before it
  }
  return result;
}

/** The filter up to the letter that failed at `failedAt`, whatever failed after it. */
function pinned(filter, failedAt) {
  // failedAt is to the millisecond and the broker's to the microsecond: the next one on
  const to = new Date(Date.parse(failedAt) + 1).toISOString();
  return { ...filter, to: filter.to && filter.to < to ? filter.to : to };
}

function summary(result) {
  const parts = [`Requeued ${num(result.done)} dead letter(s)`];
  if (result.gone) {
    parts.push(`${num(result.gone)} were already gone`);
  }
  if (!result.finished) {
    parts.push('stopped before the end');
  }
  return `${parts.join('; ')}.`;
}

function describe(error) {
  return error instanceof ApiError ? error.describe() : error.message || String(error);
}

/**
 * Asks, then requeues every dead letter matching `filter` ({queue, consumerGroup, ...}): `total` of
 * them, the newest failed at `newest` (null: not known).
 */
export function requeueMatching(filter, total, description, newest) {
  return confirmAction({
    title: `Requeue ${num(total)} dead letter(s)?`,
    body: [
      h('p', null, 'Every dead letter matching ', h('strong', null, description), ' is requeued, one request each.'),
      h('p', { class: 'muted' }, explanation),
    ],
    confirmLabel: 'Requeue all',
    stoppable: true,
    action: async ({ progress, stopped }) => {
      const result = await requeuePages(filter, total, newest, progress, stopped);
      const text = summary(result);
      if (result.fatal) {
        throw new Error(`${text} ${describe(result.fatal)}`);
      }
      if (result.failed.length) {
        throw new Error(`${text} ${num(result.failed.length)} failed: ${result.failed[0].describe()}`);
      }
      return text;
    },
  });
}
