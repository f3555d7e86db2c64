package queen.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.List;
import queen.server.store.Page;
import queen.server.store.ResourceStore;
import queen.server.store.StatsStore;

/** JSON pieces that the resource and status routes share. */
final class QueueViews {
  private QueueViews() {}

  /** The queue named in the path, or a 404. */
  static ResourceStore.QueueRow queue(ResourceStore store, String name) {
    return store.queue(name).orElseThrow(() -> ApiException.notFound("Queue not found"));
  }

  /** A partition: id, name, creation, its counts under {@code countsKey}, oldest and newest. */
  static ObjectNode partition(ObjectNode n, ResourceStore.PartitionStats p, String countsKey) {
    n.put("id", p.id().toString());
    n.put("name", p.name());
    n.put("createdAt", Json.millis(p.createdAt()));
    counts(n.putObject(countsKey), p);
    n.put("oldestMessage", Json.millisOrNull(p.oldestMessage()));
    n.put("newestMessage", Json.millisOrNull(p.newestMessage()));
    return n;
  }

  static void counts(ObjectNode n, ResourceStore.PartitionStats p) {
    n.put("total", p.total())
        .put("pending", p.pending())
        .put("processing", p.processing())
        .put("completed", p.completed())
        .put("failed", 0)
        .put("deadLetter", p.deadLetter());
  }

  /** A page of partitions as a request asks for it and the totals of the whole queue. */
  record PartitionPage(
      Page<ResourceStore.PartitionStats> page,
      int limit,
      int offset,
      StatsStore.QueueStats snapshot) {
    /**
     * The totals: summed over the partitions when the page holds all of them (exact, live), else
     * the statistics snapshot's (seconds old), which sums every partition without reading them.
     */
    void totals(ObjectNode n) {
      if (snapshot == null || page.items().size() == page.total()) {
        QueueViews.totals(n, page.items());
      } else {
        counts(n, snapshot);
        n.put("failed", 0);
      }
    }

    void pagination(ObjectNode body) {
      body.putObject("pagination")
          .put("limit", limit)
          .put("offset", offset)
          .put("total", page.total());
    }
  }

  /**
   * The partitions of a queue detail: {@code limit} (default 100, like every listing here; at most
   * 10,000) by name from {@code offset}. A queue's detail once listed every partition; at 10,000 of
   * them that was 2 MB and about half a second.
   */
  static PartitionPage partitionPage(
      ResourceStore store, StatsStore stats, ResourceStore.QueueRow q, Params p) {
    int limit = p.limit(100, 10_000);
    int offset = p.offset();
    Page<ResourceStore.PartitionStats> page = store.partitions(q.id(), limit, offset);
    StatsStore.QueueStats snapshot = null;
    if (page.items().size() < page.total()) {
      snapshot =
          stats.queues().stream().filter(s -> s.id().equals(q.id())).findFirst().orElse(null);
    }
    return new PartitionPage(page, limit, offset, snapshot);
  }

  /** The sums of the partitions' counts. */
  static void totals(ObjectNode n, List<ResourceStore.PartitionStats> partitions) {
    long total = 0;
    long pending = 0;
    long processing = 0;
    long completed = 0;
    long dead = 0;
    for (ResourceStore.PartitionStats p : partitions) {
      total += p.total();
      pending += p.pending();
      processing += p.processing();
      completed += p.completed();
      dead += p.deadLetter();
    }
    n.put("total", total)
        .put("pending", pending)
        .put("processing", processing)
        .put("completed", completed)
        .put("failed", 0)
        .put("deadLetter", dead);
  }

  /** Queue-level message counts of a snapshot. */
  static void counts(ObjectNode n, StatsStore.QueueStats q) {
    n.put("total", q.total())
        .put("pending", q.pending())
        .put("processing", q.processing())
        .put("completed", q.completed())
        .put("deadLetter", q.deadLetter());
  }

  /** Seconds since the oldest snapshot was taken (null before the first). */
  static Long statsAge(List<StatsStore.QueueStats> queues, Instant now) {
    Instant oldest = null;
    for (StatsStore.QueueStats q : queues) {
      if (q.updatedAt() != null && (oldest == null || q.updatedAt().isBefore(oldest))) {
        oldest = q.updatedAt();
      }
    }
    return oldest == null ? null : Math.max(0, now.getEpochSecond() - oldest.getEpochSecond());
  }
}
