package queen.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import queen.server.Broker;
import queen.server.BrokerConfig;

/**
 * Runs every scenario for a second against an in-process broker and both baselines, so that the
 * harness cannot rot. It measures nothing: numbers come from {@code queen bench}, never tests.
 */
class BenchSmokeTest {
  private static final String DB = "queen_t_bench_" + Long.toHexString(System.nanoTime());
  private static Broker broker;
  private static String url;

  @BeforeAll
  static void start() throws Exception {
    admin("create database " + DB + " template template0");
    Map<String, String> env = new java.util.HashMap<>(System.getenv());
    env.put("PG_DB", DB);
    env.put("PORT", "0");
    env.put("HOST", "127.0.0.1");
    env.putIfAbsent("PG_HOST", "127.0.0.1");
    env.put("DB_POOL_SIZE", "8");
    broker = Broker.start(BrokerConfig.fromEnv(env));
    url = "http://127.0.0.1:" + broker.port();
  }

  @AfterAll
  static void stop() throws Exception {
    if (broker != null) {
      broker.close();
    }
    admin("drop database if exists " + DB + " with (force)");
  }

  @Test
  void everyScenarioRunsAgainstTheBroker() throws Exception {
    try (BrokerTarget t = new BrokerTarget(url)) {
      Scenarios s = new Scenarios(t, 0, 1);
      assertMoved(s.push("push", 4, 10, 5, 30));
      assertMoved(s.popAck("pop-ack", 4, 10, 5, 2_000, false));
      assertMoved(s.popAck("queen-pop", 4, 100, 5, 2_000, true));
      s.mixed("mixed", 2, 10, 2, 10, 5, false).forEach(BenchSmokeTest::assertMoved);
      assertMoved(s.fanOut(2, 10, 4));
      assertMoved(s.latency("latency", 200, 2, 4));
      for (boolean discovery : new boolean[] {false, true}) {
        Result parked = Parked.run(t, ProcessHandle.current().pid(), 20, 5, 20, 1, 1, discovery);
        assertThat(parked.messages()).isPositive();
        assertThat(parked.errors()).isZero();
        assertThat(parked.extra())
            .containsKeys("idleBrokerDbCalls/s", "trickleBrokerDbCalls/s", "brokerRssMB");
      }
    }
  }

  @Test
  void theAdminScenarioTimesEveryRouteAfterItsWarmUp() throws Exception {
    Result r = AdminRun.run(url, null, 20, 2_000, 1, 1, 100);
    assertThat(r.errors()).as(r.summary()).isZero();
    assertThat(r.params()).containsEntry("warmup", 1);
    @SuppressWarnings("unchecked")
    Map<String, String> routes = (Map<String, String>) r.extra().get("routes");
    assertThat(routes).hasSize(AdminRun.ROUTES.size());
    assertThat(routes.values()).noneMatch(v -> v.startsWith("n=0 "));
  }

  @Test
  void theCrashScenarioCountsEveryMessageAcked() {
    // "true" for the crash: the harness alone, the database stays up
    int exit =
        new picocli.CommandLine(new PgCrashCommand())
            .execute(
                "--url",
                url,
                "--messages",
                "200",
                "--partitions",
                "4",
                "--consumers",
                "4",
                "--crash",
                "true",
                "--timeout",
                "30");
    assertThat(exit).isZero();
  }

  @Test
  void bothBaselinesRun() throws Exception {
    try (Jdbc db = jdbc()) {
      for (Target t : List.of(new NaiveTarget(db), new CeilingTarget(db))) {
        Scenarios s = new Scenarios(t, 0, 1);
        assertMoved(s.push("push", 4, 10, 5, 30));
        assertMoved(s.popAck("pop-ack", 4, 10, 5, 2_000, false));
        assertMoved(s.popAck("queen-pop", 4, 100, 5, 2_000, true));
      }
    }
  }

  @Test
  void theReportRendersTablesAndAChart() throws Exception {
    Path dir = Files.createTempDirectory("bench");
    Report.append(
        dir,
        new Result(
            "push", "broker", Result.params("batch", 10), 1, 100, 100, 10, 1, 2, 3, 0, Map.of()));
    Report.append(
        dir,
        new Result(
            "push", "naive", Result.params("batch", 10), 1, 50, 50, 5, 1, 2, 3, 0, Map.of()));
    try (Jdbc db = jdbc()) {
      Report.render(dir, Environment.describe(db));
    }
    assertThat(Files.readString(dir.resolve("results.md"))).contains("| push | broker |");
    assertThat(Files.readString(dir.resolve("batch-chart.svg"))).contains("<polyline");
  }

  @Test
  void aWindowShorterThanASecondIsNoRate() {
    long from = System.nanoTime();
    Recorder r = new Recorder(from);
    r.messages(5_000);
    Result drained = Result.of("pop-ack", "ceiling", Map.of(), r, from + 400_000_000L, Map.of());
    assertThat(drained.valid()).isFalse();
    assertThat(drained.rateText()).isEqualTo("n/a");
    assertThat(drained.extra().get(Result.INVALID).toString()).contains("warm-up");
  }

  private static void assertMoved(Result r) {
    assertThat(r.messages()).as(r.summary()).isPositive();
    assertThat(r.errors()).as(r.summary()).isZero();
  }

  private static Jdbc jdbc() {
    Map<String, String> e = System.getenv();
    return new Jdbc(
        "jdbc:postgresql://"
            + e.getOrDefault("PG_HOST", "127.0.0.1")
            + ":"
            + e.getOrDefault("PG_PORT", "5432")
            + "/"
            + DB,
        e.getOrDefault("PG_USER", "postgres"),
        e.getOrDefault("PG_PASSWORD", ""),
        8);
  }

  private static void admin(String sql) throws Exception {
    Map<String, String> e = System.getenv();
    try (Connection c =
            DriverManager.getConnection(
                "jdbc:postgresql://"
                    + e.getOrDefault("PG_HOST", "127.0.0.1")
                    + ":"
                    + e.getOrDefault("PG_PORT", "5432")
                    + "/postgres",
                e.getOrDefault("PG_USER", "postgres"),
                e.getOrDefault("PG_PASSWORD", ""));
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
