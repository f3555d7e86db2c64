package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A group's first pop on a broker carries the group-first-contact bulk seed. When that pop is
 * refused for want of a serving permit, the seed is left to the group's next pop: without it the
 * group's consumers would create their cursors one partition at a time and convoy.
 */
class FirstContactOverloadTest {
  // one connection, so one serving permit: a pop held in SQL holds all of them
  @RegisterExtension static final TestBroker broker = new TestBroker(Map.of("DB_POOL_SIZE", "1"));

  private final Wire wire = new Wire(broker);

  @Test
  void aFirstPopRefusedForWantOfAPermitLeavesTheBulkSeedToTheNextPop() throws Exception {
    for (int p = 0; p < 3; p++) {
      wire.pushNumbered("crowded", "p" + p, 0, 1);
    }
    CompletableFuture<TestBroker.Reply> holder;
    try (Connection c = broker.connect()) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        // the seed reads queen.queues: the holder's first pop waits here with the permit
        st.execute("lock table queen.queues in access exclusive mode");
      }
      holder =
          CompletableFuture.supplyAsync(
              () -> broker.get("/api/v1/pop/queue/crowded?consumerGroup=holder"));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> broker.metric("queen_pop_limiter_inflight", "") == 1);
      TestBroker.Reply refused = broker.get("/api/v1/pop/queue/crowded?consumerGroup=late");
      assertThat(refused.status()).isEqualTo(503);
      c.rollback();
    }
    assertThat(holder.get(20, TimeUnit.SECONDS).status()).isEqualTo(200);
    assertThat(seeded("late")).isZero();

    TestBroker.Reply next = broker.get("/api/v1/pop/queue/crowded?consumerGroup=late");
    assertThat(next.status()).isEqualTo(200);
    assertThat(seeded("late")).isEqualTo(1);
  }

  private static long seeded(String group) {
    return broker.sqlLong(
        "select count(*) from queen.consumer_groups_metadata m join queen.queues q on q.id"
            + " = m.queue_id where q.name = 'crowded' and m.consumer_group = '"
            + group
            + "' and m.seeded_at is not null");
  }
}
