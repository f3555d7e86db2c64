package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/** {@code /health} of a broker whose database answers but takes no writes. */
class ReadOnlyHealthTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static void readOnly(boolean on) throws SQLException {
    String db = broker.db().database();
    try (Connection c = broker.connect();
        Statement st = c.createStatement()) {
      st.execute("set default_transaction_read_only = off"); // this session may undo it
      st.execute(
          "alter database "
              + db
              + (on
                  ? " set default_transaction_read_only = on"
                  : " reset default_transaction_read_only"));
      // the broker's sessions keep the setting they started with: its next ones are new
      st.execute(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = '"
              + db
              + "' and pid <> pg_backend_pid()");
    }
  }

  @Test
  void aDatabaseThatTakesNoWritesIsUnhealthy() throws SQLException {
    assertThat(broker.get("/health").status()).isEqualTo(200);
    readOnly(true);
    try {
      // before, select 1 answered and the load balancer kept sending pushes that failed
      await().atMost(Duration.ofSeconds(20)).until(() -> broker.get("/health").status() == 503);
      assertThat(broker.post("/api/v1/push", "{\"items\":[{\"queue\":\"ro\"}]}").status())
          .isEqualTo(503);
    } finally {
      readOnly(false);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> broker.get("/health").status() == 200);
  }
}
