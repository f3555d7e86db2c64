package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

class ClosedPoolTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  // past SHUTDOWN_TIMEOUT_MS a request met the closed pool: an error without SQLSTATE, a 500, and
  // under push failover a push that was not buffered
  @Test
  void workAfterThePoolClosedIsAnOutageNotAnUnknownFailure() {
    Database db = Database.open(broker.db());
    db.close();
    assertThatThrownBy(() -> db.autocommit(c -> c.isValid(1)))
        .isInstanceOfSatisfying(
            StoreException.class,
            e -> {
              assertThat(e.outage()).isTrue();
              assertThat(e.unavailable()).isTrue();
            });
  }
}
