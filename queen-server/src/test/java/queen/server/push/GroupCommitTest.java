package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.BrokerConfig;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.store.Database;
import queen.server.store.PartitionKey;
import queen.server.store.PartitionRef;
import queen.server.store.PushStore;

/**
 * Pushes queued behind a busy flush are merged into one call, and requests for one partition into
 * one segment. The test makes the queueing certain: it holds the partition's row lock, so the one
 * flush slot stays busy while the other requests arrive.
 */
class GroupCommitTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private final Wire wire = new Wire(broker);

  @Test
  void requestsQueuedForOnePartitionBecomeOneSegmentWithExactAnswers() throws Exception {
    PartitionRef p = partition("merge");
    List<List<String>> requests = new ArrayList<>();
    for (int r = 0; r < 10; r++) {
      requests.add(List.of("r" + r + "-a", "r" + r + "-b", "r" + r + "-c"));
    }
    // the last request repeats a transaction id of a queued one: it may not share their flush
    requests.add(List.of("r1-a", "r10-new"));

    List<Appended> answers = pushBehindALock(p, requests, 0);

    assertThat(segments(p))
        .as(
            "the partition's first message, the first request alone, the queued ones merged,"
                + " the repeat after them")
        .containsExactly(1L, 3L, 27L, 1L);
    assertThat(
            broker.sqlLong(
                "select last_offset from queen.log_partitions where id = '"
                    + p.partitionId()
                    + "'"))
        .isEqualTo(31);
    for (int r = 0; r < 10; r++) {
      assertThat(answers.get(r).duplicates()).as("request %d stored everything", r).isEmpty();
      for (String txn : requests.get(r)) {
        assertThat(answers.get(r).id(p.partitionId(), txn)).as("%s has its id", txn).isNotNull();
      }
    }
    assertThat(answers.get(10).duplicates().get(p.partitionId())).containsOnlyKeys("r1-a");
    assertThat(answers.get(10).id(p.partitionId(), "r1-a"))
        .as("the duplicate names the message stored before")
        .isEqualTo(answers.get(1).id(p.partitionId(), "r1-a"));

    List<String> delivered = new ArrayList<>();
    wire.popPartition("merge", "p", "batch=100")
        .json()
        .get("messages")
        .forEach(m -> delivered.add(m.get("transactionId").asText()));
    assertThat(delivered)
        .hasSize(32)
        .doesNotHaveDuplicates()
        .containsSubsequence("r0-a", "r0-b", "r0-c", "r10-new");
  }

  @Test
  void queuedRequestsOfLargeMessagesAreMergedOnlyUpToTheByteCap() throws Exception {
    PartitionRef p = partition("merge-large");
    List<List<String>> requests = new ArrayList<>();
    for (int r = 0; r < 4; r++) {
      requests.add(List.of("big" + r));
    }
    // 400 KB each: two fit under 1 MiB, a third does not
    pushBehindALock(p, requests, 400 << 10);
    assertThat(segments(p))
        .as("the first message, the first request alone, then two queued ones per segment")
        .containsExactly(1L, 1L, 2L, 1L);
  }

  @Test
  void pushAndAckCallsAtOnceDefaultToTwoAndCannotPassThePool() {
    assertThat(BrokerConfig.fromEnv(Map.of()).pushConcurrency()).isEqualTo(2);
    assertThat(BrokerConfig.fromEnv(Map.of()).ackConcurrency()).isEqualTo(2);
    assertThat(BrokerConfig.fromEnv(Map.of("DB_POOL_SIZE", "1")).pushConcurrency()).isEqualTo(1);
    assertThatThrownBy(
            () -> BrokerConfig.fromEnv(Map.of("DB_POOL_SIZE", "4", "QUEEN_PUSH_CONCURRENCY", "5")))
        .isInstanceOf(BrokerConfig.InvalidConfigException.class)
        .hasMessageStartingWith("QUEEN_PUSH_CONCURRENCY must be between 1 and 4");
  }

  /**
   * Submits the first request while the partition is locked (its flush blocks), then the others,
   * which queue; then releases the lock. Answers the stored duplicates of each request.
   */
  private List<Appended> pushBehindALock(PartitionRef p, List<List<String>> requests, int padding)
      throws Exception {
    // closed in reverse: the lock's connection first, so that a failure here releases the
    // pushes blocked behind it before the pool waits for them
    try (Database db = Database.open(broker.db());
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
        Connection lock = broker.connect()) {
      GroupCommit commit = new GroupCommit(new PushStore(db), 1);
      lock.setAutoCommit(false);
      try (Statement st = lock.createStatement()) {
        st.execute(
            "select 1 from queen.log_partitions where id = '" + p.partitionId() + "' for update");
      }
      List<Future<Appended>> futures = new ArrayList<>();
      futures.add(pool.submit(() -> commit.append(batch(p, requests.getFirst(), padding))));
      await().atMost(Duration.ofSeconds(10)).until(() -> broker.sqlLong(lockWaiters()) == 1);
      // one at a time, so that they queue in request order (the repeat last)
      for (int r = 1; r < requests.size(); r++) {
        List<String> txns = requests.get(r);
        futures.add(pool.submit(() -> commit.append(batch(p, txns, padding))));
        int queued = r;
        await().atMost(Duration.ofSeconds(10)).until(() -> commit.queued() == queued);
      }
      lock.rollback();
      List<Appended> out = new ArrayList<>();
      for (Future<Appended> f : futures) {
        out.add(f.get());
      }
      return out;
    }
  }

  private String lockWaiters() {
    return "select count(*) from pg_stat_activity where datname = '"
        + broker.db().database()
        + "' and wait_event_type = 'Lock'";
  }

  /** A request of one message per transaction id, each payload padded by {@code padding} bytes. */
  private PushBatch batch(PartitionRef p, List<String> txns, int padding) {
    List<PushItem> items = new ArrayList<>();
    for (String t : txns) {
      items.add(
          new PushItem(
              p.queue(),
              p.partition(),
              ("{\"t\":\"" + t + "\",\"pad\":\"" + "x".repeat(padding) + "\"}")
                  .getBytes(StandardCharsets.UTF_8),
              t,
              null,
              null));
    }
    return new PushBatch(
        items,
        txns,
        Map.of(new PartitionKey(p.queue(), p.partition()), p),
        new PayloadSealing(null, id -> {}));
  }

  private PartitionRef partition(String queue) {
    wire.pushNumbered(queue, "p", 0, 1);
    UUID queueId =
        UUID.fromString(
            broker.sqlText("select id::text from queen.queues where name = '" + queue + "'"));
    UUID partitionId =
        UUID.fromString(
            broker.sqlText(
                "select id::text from queen.log_partitions where queue_id = '"
                    + queueId
                    + "' and name = 'p'"));
    return new PartitionRef(queueId, partitionId, queue, "p");
  }

  private List<Long> segments(PartitionRef p) {
    List<Long> counts = new ArrayList<>();
    for (String c :
        broker
            .sqlText(
                "select string_agg(msg_count::text, ',' order by base_offset)"
                    + " from queen.log_segments where partition_id = '"
                    + p.partitionId()
                    + "'")
            .split(",")) {
      counts.add(Long.parseLong(c));
    }
    return counts;
  }
}
