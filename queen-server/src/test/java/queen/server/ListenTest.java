package queen.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.store.DbConfig;

/** A broker that cannot listen does not start. */
class ListenTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  // it ran its background work with no port and said it listened on port -1
  @Test
  void aBrokerWhosePortIsTakenFailsToStartNamingThePortAndLeavesNoConnections() throws Exception {
    String port = Integer.toString(broker.port());
    // a database of its own: the first broker's pool may open connections meanwhile
    String own = broker.db().database() + "_port";
    DbConfig db = TestBroker.createDatabase(own);
    try {
      assertThatThrownBy(() -> Broker.start(TestBroker.configFor(db, Map.of("PORT", port))).close())
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("cannot listen on 127.0.0.1:" + port + " (in use?)");
      await().atMost(Duration.ofSeconds(10)).until(() -> connections(own) == 0);
      assertThat(broker.get("/health").status()).isEqualTo(200);
    } finally {
      TestBroker.dropDatabase(own);
    }
  }

  @Test
  void aHostThatDoesNotResolveIsAnInvalidSettingNamedAsSuch() {
    assertThatThrownBy(() -> broker.startAnother(Map.of("HOST", "no-such-host.invalid")).close())
        .isInstanceOf(BrokerConfig.InvalidConfigException.class)
        .hasMessageStartingWith("HOST no-such-host.invalid");
  }

  @Test
  void aBrokerThatListensMarksTheAotCacheItRecordsAsServed() throws Exception {
    java.nio.file.Path mark =
        java.nio.file.Files.createTempDirectory("aot").resolve("queen.aot.served");
    ChildBroker.Started child =
        ChildBroker.start(
            broker.db(), java.util.List.of(), Map.of("QUEEN_AOT_SERVED", mark.toString()));
    try {
      // written just after it starts listening, so maybe after /health first answered
      await().atMost(Duration.ofSeconds(10)).until(() -> java.nio.file.Files.exists(mark));
    } finally {
      child.process().destroyForcibly().waitFor();
    }
  }

  @Test
  void aBrokerThatMigratedLeavesTheAotCacheItRecordsUnmarked() throws Exception {
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("aot");
    java.nio.file.Path mark = dir.resolve("queen.aot.served");
    // the tests' logging shows warnings only; the child logs at INFO to read its decision
    java.nio.file.Path logging = dir.resolve("logback.xml");
    java.nio.file.Files.writeString(
        logging,
        "<configuration><appender name=\"O\" class=\"ch.qos.logback.core.ConsoleAppender\">"
            + "<encoder><pattern>%msg%n</pattern></encoder></appender>"
            + "<root level=\"INFO\"><appender-ref ref=\"O\"/></root></configuration>");
    String fresh = broker.db().database() + "_aot";
    ChildBroker.Started child =
        ChildBroker.start(
            TestBroker.createDatabase(fresh),
            java.util.List.of(),
            Map.of(
                "QUEEN_AOT_SERVED",
                mark.toString(),
                "JDK_JAVA_OPTIONS",
                "-Dlogback.configurationFile=" + logging));
    try {
      // a cache recorded while migrating holds Flyway's classes, which later starts never need
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> java.nio.file.Files.readString(child.log()).contains("records the AOT"));
      assertThat(mark).doesNotExist();
    } finally {
      child.process().destroyForcibly().waitFor();
      TestBroker.dropDatabase(fresh);
    }
  }

  private static long connections(String database) {
    // clients' only, Flyway's among them: Citus's maintenance daemon and autovacuum connect too
    return broker.sqlLong(
        "select count(*) from pg_stat_activity where datname = '"
            + database
            + "' and backend_type = 'client backend'");
  }
}
