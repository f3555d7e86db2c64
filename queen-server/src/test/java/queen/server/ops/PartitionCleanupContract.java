package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.store.RetentionStore;

/**
 * Inactive partitions (PARTITION_CLEANUP_DAYS) removed by the retention cycle over a real broker()
 * and database, with the cycle's clock set by the test; what must stay, stays.
 */
abstract class PartitionCleanupContract extends RetentionFixture {
  static final Duration IDLE = Duration.ofDays(30);

  /** One retention cycle at {@code now} that removes partitions inactive for {@code idle}. */
  long cleanAt(Instant now, Duration idle) {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    new Retention(
            new RetentionStore(db),
            new Retention.Settings(
                Duration.ofHours(1), 1_000, 16L << 20, Retention.Vacuum.OFF, idle),
            () -> now,
            meters,
            (q, n) -> {})
        .runOnce();
    return (long) meters.counter("queen_retention_removed_partitions").count();
  }

  boolean exists(String queue, String partition) {
    return broker()
            .sqlLong(
                "select count(*) from queen.log_partitions where id = " + pid(queue, partition))
        == 1;
  }

  /**
   * Sets the partition's dates (a quoted id, a quoted time): literals, for Citus plans no subquery,
   * nor date arithmetic on columns, in a distributed UPDATE.
   */
  void datePartition(String partition, String at) {
    broker()
        .sql(
            "update queen.log_partitions set created_at = "
                + at
                + ", last_write_at = "
                + at
                + ", newest_created_at = "
                + at
                + " where id = "
                + partition);
  }

  /** Sets the dates of the partition's cursors, as {@link #datePartition}. */
  void dateCursors(String partition, String at) {
    broker()
        .sql(
            "update queen.log_consumers set created_at = "
                + at
                + ", last_consumed_at = "
                + at
                + ", lease_acquired_at = "
                + at
                + ", lease_expires_at = "
                + at
                + " where partition_id = "
                + partition);
  }

  @Test
  void anEmptiedQuietPartitionGoesWithItsCursorsAndItsNextPushCreatesItAgain() {
    retained("orders", 0, 1);
    wire.pushNumbered("orders", "o-1", 0, 3);
    consume("orders", "o-1", "__QUEUE_MODE__", 3);
    consume("orders", "o-1", "billing", 3);
    String id = broker().sqlText("select " + pid("orders", "o-1") + "::text");

    assertThat(cleanAt(Instant.now().plus(Duration.ofDays(40)), IDLE)).isPositive();

    assertThat(
            broker().sqlLong("select count(*) from queen.log_partitions where id = '" + id + "'"))
        .isZero();
    assertThat(
            broker()
                .sqlLong(
                    "select count(*) from queen.log_consumers where partition_id = '" + id + "'"))
        .as("every group's cursor goes with it")
        .isZero();
    // the broker still has the partition's id cached: its push finds the row gone and creates it
    wire.pushNumbered("orders", "o-1", 3, 2);
    assertThat(broker().sqlText("select " + pid("orders", "o-1") + "::text"))
        .as("the same id: derived from the queue and the name")
        .isEqualTo(id);
    consume("orders", "o-1", "billing", 2);
    JsonNode queueMode = wire.popPartition("orders", "o-1", "batch=10").json();
    assertThat(Wire.numbers(queueMode)).containsExactly(3, 4);
  }

  @Test
  void aPartitionHoldingMessagesOrDeadLettersStays() {
    retained("kept", 0, 1);
    wire.pushNumbered("kept", "unread", 0, 2);
    wire.pushNumbered("kept", "dead", 0, 1);
    JsonNode got = wire.popPartition("kept", "dead", "batch=10").json();
    wire.ackAll(got, "dlq", "poison");

    cleanAt(Instant.now().plus(Duration.ofDays(40)), IDLE);

    assertThat(exists("kept", "unread")).isTrue();
    assertThat(Wire.numbers(wire.popPartition("kept", "unread", "batch=10").json()))
        .containsExactly(0, 1);
    assertThat(exists("kept", "dead")).as("its dead letters keep it").isTrue();
    assertThat(broker().sqlLong(deadIn("kept"))).isEqualTo(1);
  }

  @Test
  void aPartitionStaysWhileAnyCursorWasActiveWithinTheIdleTime() {
    retained("recent", 0, 1);
    wire.pushNumbered("recent", "p", 0, 1);
    consume("recent", "p", "late", 1);
    String partition = "'" + broker().sqlText("select " + pid("recent", "p") + "::text") + "'";
    String longAgo = "'" + Instant.now().minus(Duration.ofDays(60)) + "'";
    // the partition's own dates long past; the cursor was acked just now
    datePartition(partition, longAgo);
    Instant at = Instant.now().plus(Duration.ofDays(20));

    cleanAt(at, IDLE);
    assertThat(exists("recent", "p")).isTrue();

    dateCursors(partition, longAgo);
    cleanAt(at, IDLE);
    assertThat(exists("recent", "p")).isFalse();
  }

  // a new group's first pop of the queue seeds a cursor on every partition, the emptied ones too:
  // counted as activity, one such group a month kept every empty partition for good
  @Test
  void aCursorSeededOnAnEmptiedPartitionAndNeverPoppedDoesNotKeepIt() {
    retained("seeded", 0, 1);
    wire.pushNumbered("seeded", "p", 0, 1);
    consume("seeded", "p", "__QUEUE_MODE__", 1);
    cleanAt(Instant.now().plus(Duration.ofDays(2)), IDLE);
    assertThat(
            broker()
                .sqlLong(
                    "select count(*) from queen.log_segments where partition_id = "
                        + pid("seeded", "p")))
        .as("emptied by retention, kept as recent")
        .isZero();
    String partition = "'" + broker().sqlText("select " + pid("seeded", "p") + "::text") + "'";
    String longAgo = "'" + Instant.now().minus(Duration.ofDays(60)) + "'";
    datePartition(partition, longAgo);
    dateCursors(partition, longAgo);
    assertThat(broker().get("/api/v1/pop/queue/seeded?consumerGroup=report").status())
        .isEqualTo(204);
    assertThat(
            broker()
                .sqlLong(
                    "select count(*) from queen.log_consumers where consumer_group = 'report'"
                        + " and partition_id = "
                        + partition))
        .as("seeded just now")
        .isEqualTo(1);

    cleanAt(Instant.now().plus(Duration.ofDays(20)), IDLE);
    assertThat(exists("seeded", "p")).isFalse();
  }

  // the removal judges the partition under its lock: a push that held it first is read, not lost
  @Test
  void aPushHoldingThePartitionLockWhenTheRemovalComesKeepsIt() throws Exception {
    retained("held", 0, 1);
    wire.pushNumbered("held", "p", 0, 1);
    consume("held", "p", "__QUEUE_MODE__", 1);
    Instant at = Instant.now().plus(Duration.ofDays(40));
    assertThat(cleanAt(at, Duration.ofDays(60))).as("not yet inactive").isZero();
    String id = broker().sqlText("select " + pid("held", "p") + "::text");
    // what log_push_v1 does first: the row lock, then the offsets
    try (Connection push = broker().connect();
        Statement st = push.createStatement();
        ExecutorService one = Executors.newSingleThreadExecutor()) {
      push.setAutoCommit(false);
      st.execute(
          "update queen.log_partitions set last_offset = last_offset + 1 where id = '" + id + "'");
      Future<Integer> removal =
          one.submit(() -> new RetentionStore(db).removeInactive(at, null, 1_000).removed());
      // it skips the locked partition and answers at once; one that did not look would wait
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  removal.isDone()
                      || broker()
                              .sqlLong(
                                  "select count(*) from pg_stat_activity where datname ="
                                      + " current_database() and wait_event_type = 'Lock'")
                          > 0);
      push.commit();
      removal.get();
    }
    assertThat(exists("held", "p")).isTrue();
  }

  @Test
  void nothingIsRemovedWhenTheStepIsOff() {
    retained("off", 0, 1);
    wire.pushNumbered("off", "p", 0, 1);
    consume("off", "p", "__QUEUE_MODE__", 1);

    assertThat(cleanAt(Instant.now().plus(Duration.ofDays(400)), Duration.ZERO)).isZero();
    assertThat(exists("off", "p")).isTrue();
  }

  // a push, pop or ack meeting a removal: nothing lost, nothing delivered twice, no 500
  @Test
  void pushesPopsAndAcksRacingRemovalsLoseNothing() throws Exception {
    retained("racing", 0, 1);
    int producers = 4;
    int each = 250;
    int total = producers * each;
    Map<String, AtomicInteger> received = new ConcurrentHashMap<>();
    CountDownLatch all = new CountDownLatch(total);
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger unexpected = new AtomicInteger();
    AtomicInteger removed = new AtomicInteger();
    try (ExecutorService pool = Executors.newFixedThreadPool(producers + 5)) {
      for (int p = 0; p < producers; p++) {
        int producer = p;
        pool.submit(
            () -> {
              Random random = new Random(producer);
              for (int i = 0; i < each; i++) {
                JsonNode body =
                    Wire.items(
                        List.of(
                            item(
                                "racing",
                                "p" + random.nextInt(60),
                                "r-" + producer + "-" + i,
                                object().put("i", i))));
                TestBroker.Reply r = broker().post("/api/v1/push", body);
                if (r.status() == 503) {
                  i--;
                } else if (r.status() != 201) {
                  unexpected.incrementAndGet();
                }
              }
              return null;
            });
      }
      for (int c = 0; c < 4; c++) {
        pool.submit(
            () -> {
              while (!done.get()) {
                TestBroker.Reply r =
                    broker().get("/api/v1/pop/queue/racing?batch=10&wait=true&timeout=500");
                if (r.status() == 200) {
                  for (JsonNode m : r.json().get("messages")) {
                    if (received
                            .computeIfAbsent(
                                m.get("transactionId").asText(), k -> new AtomicInteger())
                            .incrementAndGet()
                        == 1) {
                      all.countDown();
                    }
                  }
                  if (!wire.ackAll(r.json()).get(0).get("success").asBoolean()) {
                    unexpected.incrementAndGet();
                  }
                } else if (r.status() != 204 && r.status() != 503) {
                  unexpected.incrementAndGet();
                }
              }
              return null;
            });
      }
      Future<?> cleaner =
          pool.submit(
              () -> {
                while (!done.get()) {
                  // a second's quiet makes a partition inactive: removals as often as the race
                  // allows, while a partition created again still gets its push before it is
                  // old enough to go (in production it must be quiet for days)
                  removed.addAndGet((int) cleanAt(Instant.now(), Duration.ofSeconds(1)));
                }
                return null;
              });
      boolean allReceived = all.await(3, TimeUnit.MINUTES);
      done.set(true);
      cleaner.get();
      assertThat(allReceived).as("every pushed message delivered").isTrue();
    }
    assertThat(received).hasSize(total);
    assertThat(received.values()).allSatisfy(n -> assertThat(n.get()).as("deliveries").isOne());
    assertThat(unexpected.get()).as("answers other than 201, 200, 204 or 503").isZero();
    assertThat(removed.get()).as("removals raced the traffic").isPositive();
  }
}
