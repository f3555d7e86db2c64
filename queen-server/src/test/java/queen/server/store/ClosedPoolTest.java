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

  // the connection the server closed threw again when put back in autocommit, an error without
  // SQLSTATE that took the place of the 57P01: a 500 instead of a 503 (a state read of streams)
  @Test
  void aTransactionWhoseConnectionTheServerEndsIsAnOutage() {
    try (Database db = Database.open(broker.db())) {
      assertThatThrownBy(
              () ->
                  db.transaction(
                      c -> {
                        try (var ps =
                            c.prepareStatement("select pg_terminate_backend(pg_backend_pid())")) {
                          return ps.execute();
                        }
                      }))
          .isInstanceOfSatisfying(
              StoreException.class, e -> assertThat(e.outage()).as(e.toString()).isTrue());
      boolean valid = db.autocommit(c -> c.isValid(1));
      assertThat(valid).as("the pool hands out a good one next").isTrue();
    }
  }
}
