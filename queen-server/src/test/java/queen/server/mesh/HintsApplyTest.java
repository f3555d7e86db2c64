package queen.server.mesh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import queen.server.TestBroker;
import queen.server.store.Database;
import queen.server.store.DbConfig;
import queen.server.store.Notifications;

/**
 * A broker applies the others' hints on a thread apart from its listener, in the order sent: a
 * refresh stuck on the pool leaves the listener reading (its session's snapshot would hold back
 * cleanup), and no push hint overtakes the refresh of a configure sent before it. A broker whose
 * own listener is away still sends.
 */
class HintsApplyTest {
  private static final String DB = "hints_apply_test";
  private Database db;
  private DbConfig config;
  private Notifications notifications;
  private Hints peer;
  private Hints hints;
  private final MeterRegistry meters = new SimpleMeterRegistry();
  private final MeterRegistry peerMeters = new SimpleMeterRegistry();
  private final List<String> applied = new CopyOnWriteArrayList<>();
  private final CountDownLatch refreshing = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);

  @BeforeEach
  void start() throws Exception {
    TestBroker.dropDatabase(DB);
    config = TestBroker.createDatabase(DB);
    db = Database.open(config);
    notifications = new Notifications(db, config);
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    for (AutoCloseable c : new AutoCloseable[] {peer, hints, db}) {
      if (c != null) {
        c.close();
      }
    }
    TestBroker.dropDatabase(DB);
  }

  /** Starts the peer that sends and the broker under test, whose refresh waits for the test. */
  private void listen(int maxUnapplied) {
    peer = new Hints(notifications, true, peerMeters);
    peer.start(recorder(new CopyOnWriteArrayList<>(), null, null));
    hints = new Hints(notifications, true, meters, maxUnapplied);
    hints.start(recorder(applied, refreshing, release));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> notifications.sessions(Notifications.LISTENER_NAME, 0) == 2);
  }

  private static Hints.Receiver recorder(
      List<String> into, CountDownLatch entered, CountDownLatch proceed) {
    return new Hints.Receiver() {
      @Override
      public void pushed(String queue, String partition, int count, long bytes) {
        into.add("pushed " + partition);
      }

      @Override
      public void released(
          String queue, String partition, String group, boolean hasMore, UUID lease) {
        into.add("released " + partition);
      }

      @Override
      public void refresh() {
        into.add("refresh");
        if (entered != null) {
          entered.countDown();
          try {
            proceed.await(30, TimeUnit.SECONDS); // a refresh waiting on the pool
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }

      @Override
      public void reconnected() {
        into.add("reconnected");
      }
    };
  }

  /** Sends one push hint from the peer as a NOTIFY of its own. */
  private void pushFromPeer(String partition) {
    double before = peerSent();
    peer.pushed("q", partition, 1, 10);
    await().atMost(Duration.ofSeconds(10)).until(() -> peerSent() > before);
  }

  private double peerSent() {
    return peerMeters.get("queen_hints_sent").functionCounter().count();
  }

  private double unapplied() {
    return meters.get("queen_hints_unapplied").gauge().value();
  }

  @Test
  void aStuckRefreshLeavesTheListenerReadingAndNothingOvertakesIt() throws Exception {
    listen(100);

    peer.refresh();
    assertThat(refreshing.await(10, TimeUnit.SECONDS)).isTrue();
    pushFromPeer("p0");
    pushFromPeer("p1");
    pushFromPeer("p2");

    // read by the listener while the refresh before them still waits
    await().atMost(Duration.ofSeconds(10)).until(() -> unapplied() == 3);
    assertThat(applied).containsExactly("refresh");

    release.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> applied.size() == 4 && unapplied() == 0);
    assertThat(applied).containsExactly("refresh", "pushed p0", "pushed p1", "pushed p2");
    assertThat(meters.get("queen_hints_apply_overruns").functionCounter().count()).isZero();
  }

  @Test
  void hintsTooFarBehindAreDroppedForOneRecoveryThenAppliedInOrder() throws Exception {
    listen(3);

    peer.refresh();
    assertThat(refreshing.await(10, TimeUnit.SECONDS)).isTrue();
    for (int i = 0; i < 5; i++) {
      pushFromPeer("p" + i);
    }
    // p0..p2 filled the queue; p3 found it full: dropped for a recovery, then p3 and p4
    await().atMost(Duration.ofSeconds(10)).until(() -> unapplied() == 3);
    assertThat(meters.get("queen_hints_apply_overruns").functionCounter().count()).isEqualTo(1);

    release.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> applied.size() == 4);
    assertThat(applied).containsExactly("refresh", "reconnected", "pushed p3", "pushed p4");
  }

  @Test
  void aBrokerWhoseOwnListenerIsAwayStillSendsToTheOthers() {
    // the peer's listening connection names a database that is not there: it never listens
    peer =
        new Hints(
            new Notifications(db, config.withDatabase("hints_apply_test_absent")),
            true,
            peerMeters);
    peer.start(recorder(new CopyOnWriteArrayList<>(), null, null));
    hints = new Hints(notifications, true, meters, 100);
    hints.start(recorder(applied, null, null));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> notifications.sessions(Notifications.LISTENER_NAME, 0) == 1);

    peer.pushed("q", "p0", 1, 10);
    // the old count of listeners, ours included, found only one and sent nothing
    await().atMost(Duration.ofSeconds(10)).until(() -> applied.contains("pushed p0"));
  }
}
