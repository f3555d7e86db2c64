package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/** The admin reads run on a pool of their own (QUEEN_ADMIN_POOL_SIZE). */
class AdminPoolTest {
  @RegisterExtension static final TestBroker broker = new TestBroker(Map.of("DB_POOL_SIZE", "2"));

  private final Wire wire = new Wire(broker);

  // a dashboard's reads never wait for a connection of pushes and pops, nor take one
  @Test
  void adminReadsAnswerWhileEveryConnectionOfPushesIsTakenAndThePushesThenComplete()
      throws Exception {
    wire.pushNumbered("walled", "p0", 0, 1);
    String partition =
        broker.sqlText(
            "select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
                + " where q.name = 'walled' and p.name = 'p0'");
    // closed in reverse: the lock's connection first, so that a failure releases the pushes
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
        Connection lock = broker.connect()) {
      lock.setAutoCommit(false);
      try (Statement st = lock.createStatement()) {
        st.execute("select 1 from queen.log_partitions where id = '" + partition + "' for update");
      }
      // both connections of DB_POOL_SIZE=2 wait for the lock inside a push
      List<Future<Integer>> pushes =
          List.of(
              pool.submit(() -> push(1)),
              pool.submit(
                  () -> {
                    await()
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> broker.sqlLong(waiting("queen")) == 1);
                    return push(2);
                  }));
      await().atMost(Duration.ofSeconds(10)).until(() -> broker.sqlLong(waiting("queen")) == 2);

      for (String path :
          List.of(
              "/api/v1/messages?queue=walled",
              "/api/v1/resources/queues/walled",
              "/api/v1/consumer-groups/lagging",
              "/api/v1/analytics/queue-ops?queue=walled")) {
        assertThat(broker.get(path).status()).as(path).isEqualTo(200);
      }
      assertThat(broker.sqlLong(waiting("queen"))).as("pushes still waiting").isEqualTo(2);

      lock.rollback();
      for (Future<Integer> push : pushes) {
        assertThat(push.get()).isEqualTo(201);
      }
    }
    assertThat(
            broker.sqlLong(
                "select last_offset from queen.log_partitions where id = '" + partition + "'"))
        .isEqualTo(2);
  }

  private int push(int n) {
    return broker
        .post(
            "/api/v1/push",
            Wire.items(List.of(Wire.item("walled", "p0", "w" + n, Wire.object().put("n", n)))))
        .status();
  }

  /** Connections of the pool named {@code pool} waiting for a lock. */
  private static String waiting(String pool) {
    return "select count(*) from pg_stat_activity where datname = '"
        + broker.db().database()
        + "' and application_name = '"
        + pool
        + "' and wait_event_type = 'Lock'";
  }
}
