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

/**
 * Every distinct (partition, transaction) matching the filter, paging through the list; null when
 * the user stopped first.
 */
async function collect(filter, progress, stopped) {
  const letters = new Map();
  for (let offset = 0; !stopped();) {
    const page = await api('/api/v1/dlq', { query: { ...filter, limit: PAGE, offset } });
    for (const m of page.messages) {
      // the two ids only: holding whole letters, payloads included, could take the tab's memory
      letters.set(`${m.partitionId}|${m.transactionId}`,
        { partitionId: m.partitionId, transactionId: m.transactionId });
    }
    offset += page.messages.length;
    progress(`Collecting dead letters: ${num(letters.size)}…`);
    if (!page.messages.length || offset >= page.total) {
      return [...letters.values()];
    }
  }
  return null;
}

/** The broker's answer for a dead letter requeued or removed meanwhile (not an unknown route). */
function alreadyGone(error) {
  const text = error.body?.error;
  return error.status === 404 && typeof text === 'string'
    && /\b(dead letter|message) not found\b/i.test(text);
}

/**
 * Requeues the letters, PARALLEL requests at a time. The first error that makes going on pointless
 * (broker unreachable, 401, 403, anything not from the broker) becomes `fatal`: no worker sends
 * another request, and the result comes back once the requests in flight have ended.
 */
async function retryAll(letters, progress, stopped) {
  const result = { done: 0, gone: 0, failed: [], fatal: null };
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
          result.failed.push(error);
        }
      }
      progress(`Requeued ${num(result.done)} of ${num(letters.length)}…`);
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return result;
}

function summary(result, total) {
  const parts = [`Requeued ${num(result.done)} of ${num(total)} dead letter(s)`];
  if (result.gone) {
    parts.push(`${num(result.gone)} were already gone`);
  }
  if (result.done + result.gone + result.failed.length < total) {
    parts.push('stopped before the end');
  }
  return `${parts.join('; ')}.`;
}

function describe(error) {
  return error instanceof ApiError ? error.describe() : error.message || String(error);
}

/** Asks, then requeues every dead letter matching `filter` ({queue, consumerGroup, ...}). */
export function requeueMatching(filter, total, description) {
  return confirmAction({
    title: `Requeue ${num(total)} dead letter(s)?`,
    body: [
      h('p', null, 'Every dead letter matching ', h('strong', null, description), ' is requeued, one request each.'),
      h('p', { class: 'muted' }, explanation),
    ],
    confirmLabel: 'Requeue all',
    stoppable: true,
    action: async ({ progress, stopped }) => {
      const letters = await collect(filter, progress, stopped);
      if (!letters) {
        return 'Stopped before anything was requeued.';
      }
      const result = await retryAll(letters, progress, stopped);
      const text = summary(result, letters.length);
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
