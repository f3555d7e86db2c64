package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import queen.server.Broker;
import queen.server.TcpProxy;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * With QUEEN_PUSH_FAILOVER, a push that cannot reach PostgreSQL is buffered and answered {@code
 * buffered}; when the database is back the buffer drains, and nothing answered buffered is lost or
 * stored twice. The database "goes away" by cutting a TCP proxy between the broker and it.
 */
class FailoverTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static List<JsonNode> push(Broker via, int from, int count) {
    List<ObjectNode> items = new ArrayList<>();
    for (int n = from; n < from + count; n++) {
      items.add(Wire.item("fo", "p" + (n % 4), "fo-" + n, Wire.object().put("n", n)));
    }
    TestBroker.Reply r = broker.post(via, "/api/v1/push", Wire.items(items));
    assertThat(r.status()).as(r.text()).isEqualTo(201);
    List<JsonNode> out = new ArrayList<>();
    r.json().forEach(out::add);
    return out;
  }

  /** Another broker with failover on, whose database is reached through the proxy. */
  private static Broker withFailoverBehind(TcpProxy proxy, Map<String, String> env) {
    Map<String, String> vars = new java.util.HashMap<>(env);
    vars.put("PG_HOST", "127.0.0.1");
    vars.put("PG_PORT", Integer.toString(proxy.port()));
    vars.put("QUEEN_PUSH_FAILOVER", "true");
    return broker.startAnother(vars);
  }

  @Test
  void pushesDuringAnOutageAreBufferedAndAllArriveOnceWhenTheDatabaseIsBack() throws Exception {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Logger database = (Logger) LoggerFactory.getLogger("queen.server.store.Database");
    database.setLevel(Level.INFO);
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    root.addAppender(logged);
    try (TcpProxy proxy = new TcpProxy(broker.db().port());
        Broker b = withFailoverBehind(proxy, Map.of())) {
      for (JsonNode r : push(b, 0, 100)) {
        assertThat(r.get("status").asText()).isEqualTo("queued");
      }
      proxy.cut();
      int buffered = 0;
      for (int i = 0; i < 30; i++) {
        for (JsonNode r : push(b, 100 + i * 10, 10)) {
          assertThat(r.get("status").asText()).isEqualTo("buffered");
          buffered++;
        }
      }
      assertThat(buffered).isEqualTo(300);
      assertThat(broker.get(b, "/api/v1/status/buffers").json().get("pending").asLong())
          .isEqualTo(300);
      proxy.restore();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> broker.get(b, "/api/v1/status/buffers").json().get("pending").asLong() == 0);
      for (JsonNode r : push(b, 400, 100)) {
        assertThat(r.get("status").asText()).as("direct again").isEqualTo("queued");
      }
    }
    root.detachAppender(logged);
    List<String> outage =
        logged.list.stream()
            .map(ILoggingEvent::getFormattedMessage)
            .filter(m -> m.startsWith("database unreachable") || m.startsWith("database reachable"))
            .toList();
    // once as it went, once as it came back, not once a refused push: a query whose answer was
    // on its way when the proxy cut may still complete after another's failure, and log a flap
    assertThat(outage).as("the outage logged as it went and came back").hasSizeBetween(2, 6);
    for (int i = 0; i < outage.size(); i++) {
      assertThat(outage.get(i))
          .as("alternating, from going to back")
          .startsWith(i % 2 == 0 ? "database unreachable" : "database reachable again");
    }
    assertThat(outage).hasSize(outage.size() / 2 * 2);
    assertThat(logged.list)
        .filteredOn(
            e -> e.getLevel().isGreaterOrEqual(Level.WARN) && e.getLoggerName().startsWith("queen"))
        .as("no stack trace for an expected outage")
        .allSatisfy(e -> assertThat(e.getThrowableProxy()).isNull());
    Set<Integer> seen = new HashSet<>();
    int total = 0;
    while (true) {
      TestBroker.Reply r =
          broker.get("/api/v1/pop/queue/fo?consumerGroup=check&batch=500&autoAck=true");
      if (r.status() == 204) {
        break;
      }
      for (JsonNode m : r.json().get("messages")) {
        seen.add(m.at("/data/n").asInt());
        total++;
      }
    }
    assertThat(total).as("every message once").isEqualTo(500);
    assertThat(seen).hasSize(500);
  }

  @Test
  void aDatabaseThatTakesNoWritesHoldsTheDrainAndSetsNothingAside() throws Exception {
    ListAppender<ILoggingEvent> logged = drainLog();
    String db = broker.db().database();
    // opened before the database turns read-only, its session stays writable to undo it
    try (java.sql.Connection admin = broker.connect();
        java.sql.Statement sql = admin.createStatement();
        TcpProxy proxy = new TcpProxy(broker.db().port());
        Broker b = withFailoverBehind(proxy, Map.of())) {
      proxy.cut();
      for (int i = 0; i < 5; i++) {
        List<ObjectNode> items = new ArrayList<>();
        for (int n = i * 10; n < i * 10 + 10; n++) {
          items.add(Wire.item("fo-ro", "p" + (n % 4), "fo-ro-" + n, Wire.object().put("n", n)));
        }
        assertThat(broker.post(b, "/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
      }
      readOnly(sql, db, true);
      logged.list.clear(); // the failover's own warning
      proxy.restore();
      await().atMost(Duration.ofSeconds(30)).until(() -> !logged.list.isEmpty());
      assertThat(logged.list.getFirst().getFormattedMessage())
          .as("the drain's first attempt")
          .contains("refused by the database, retrying")
          .contains("read-only transaction");
      JsonNode status = broker.get(b, "/api/v1/status/buffers").json();
      assertThat(status.get("failed").asLong()).as("nothing set aside").isZero();
      assertThat(status.get("pending").asLong()).isEqualTo(50);
      readOnly(sql, db, false);
      // its sessions end, and the new ones can write: those through the proxy alone (a cut and
      // a restore of the proxy could lose its port to another socket in between)
      endSessionsThrough(sql, proxy);
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> broker.get(b, "/api/v1/status/buffers").json().get("pending").asLong() == 0);
      assertThat(broker.get(b, "/api/v1/status/buffers").json().get("failed").asLong()).isZero();
    } finally {
      ((Logger) LoggerFactory.getLogger(BufferedPush.class)).detachAppender(logged);
    }
    assertThat(
            broker.sqlLong(
                "select sum(p.last_offset + 1) from queen.log_partitions p join queen.queues q"
                    + " on q.id = p.queue_id where q.name = 'fo-ro'"))
        .as("every buffered message stored once")
        .isEqualTo(50);
  }

  @Test
  void withoutFailoverAPushAfterAFailedDrainWaitsForItInsteadOfOvertakingIt() throws Exception {
    ListAppender<ILoggingEvent> logged = drainLog();
    String db = broker.db().database();
    try (java.sql.Connection admin = broker.connect();
        java.sql.Statement sql = admin.createStatement();
        TcpProxy proxy = new TcpProxy(broker.db().port());
        Broker b =
            broker.startAnother(
                Map.of(
                    "PG_HOST", "127.0.0.1",
                    "PG_PORT", Integer.toString(proxy.port()),
                    "QUEEN_STATE_REFRESH_MS", "100"))) {
      broker.post(b, "/api/v1/system/maintenance", Wire.object().put("enabled", true));
      for (int n = 0; n < 10; n++) {
        ObjectNode item = Wire.item("fo-order", "p", "fo-order-" + n, Wire.object().put("n", n));
        JsonNode r = broker.post(b, "/api/v1/push", Wire.items(List.of(item))).json().get(0);
        assertThat(r.get("status").asText()).isEqualTo("buffered");
      }
      readOnly(sql, db, true);
      endSessionsThrough(sql, proxy);
      logged.list.clear();
      sql.execute("select queen.set_push_maintenance_v1(false)");
      await().atMost(Duration.ofSeconds(30)).until(() -> !logged.list.isEmpty());
      readOnly(sql, db, false);
      endSessionsThrough(sql, proxy);
      // writable again before the drain's next turn: a push straight to the database came first
      for (int n = 10; n < 20; n++) {
        ObjectNode item = Wire.item("fo-order", "p", "fo-order-" + n, Wire.object().put("n", n));
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> broker.post(b, "/api/v1/push", Wire.items(List.of(item))).status() == 201);
      }
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> broker.get(b, "/api/v1/status/buffers").json().get("pending").asLong() == 0);
    } finally {
      ((Logger) LoggerFactory.getLogger(BufferedPush.class)).detachAppender(logged);
    }
    TestBroker.Reply r =
        broker.get(
            "/api/v1/pop/queue/fo-order/partition/p?consumerGroup=check&batch=100&autoAck=true");
    List<Integer> order = new ArrayList<>();
    r.json().get("messages").forEach(m -> order.add(m.at("/data/n").asInt()));
    assertThat(order)
        .as("in push order, each once")
        .isEqualTo(java.util.stream.IntStream.range(0, 20).boxed().toList());
  }

  /** What BufferedPush logs from now on; detach it when done. */
  private static ListAppender<ILoggingEvent> drainLog() {
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    ((Logger) LoggerFactory.getLogger(BufferedPush.class)).addAppender(logged);
    return logged;
  }

  /**
   * Every new session of the test's database read-only (SQLSTATE 25006), as a primary demoted by a
   * failover answers, or writable again. On Citus, the coordinator's database alone: the workers'
   * sessions must stay writable.
   */
  private static void readOnly(java.sql.Statement sql, String db, boolean on) throws Exception {
    sql.execute("set citus.enable_ddl_propagation = off");
    sql.execute(
        "alter database "
            + db
            + (on
                ? " set default_transaction_read_only = on"
                : " reset default_transaction_read_only"));
  }

  /** Ends the database sessions a broker behind {@code proxy} holds: its next ones are new. */
  private static void endSessionsThrough(java.sql.Statement sql, TcpProxy proxy) throws Exception {
    for (int port : proxy.upstreamPorts()) {
      sql.execute(
          "select pg_terminate_backend(pid) from pg_stat_activity where client_port = " + port);
    }
  }

  @Test
  void withAnUnusableBufferPushesGoStraightToTheDatabaseOnceItIsBack() throws Exception {
    try (TcpProxy proxy = new TcpProxy(broker.db().port());
        Broker b =
            withFailoverBehind(
                proxy, Map.of("FILE_BUFFER_DIR", "/proc/queen-cannot-buffer-here"))) {
      ObjectNode first = Wire.item("fo-nobuf", "p", "nobuf-0", Wire.object());
      assertThat(broker.post(b, "/api/v1/push", Wire.items(List.of(first))).status())
          .isEqualTo(201);
      proxy.cut();
      ObjectNode item = Wire.item("fo-nobuf", "p", "nobuf-1", Wire.object());
      assertThat(broker.post(b, "/api/v1/push", Wire.items(List.of(item))).status())
          .as("nowhere to put it")
          .isEqualTo(503);
      proxy.restore();
      // one outage made every later push a 503: the buffer path was taken and never left
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> broker.post(b, "/api/v1/push", Wire.items(List.of(item))).status() == 201);
    }
  }
}
