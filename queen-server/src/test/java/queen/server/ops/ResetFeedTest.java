package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.store.ConsumerGroupStore;
import queen.server.store.Database;
import queen.server.store.SystemStore;

/**
 * The feed of consumer-group resets that every broker follows, read as a broker's state refresher
 * reads it, with resets announced in transactions of their own (as the delete and seek functions
 * announce them).
 */
class ResetFeedTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private Database db;
  private SystemStore state;
  private final List<String> told = new ArrayList<>();

  @BeforeEach
  void open() {
    db = Database.open(broker.db());
    state = new SystemStore(db);
  }

  @AfterEach
  void close() {
    db.close();
  }

  private ConsumerGroups follower(Duration settle) {
    ConsumerGroups groups =
        new ConsumerGroups(
            new ConsumerGroupStore(db), (queue, group) -> told.add(group), () -> {}, settle);
    groups.start();
    return groups;
  }

  private void read(ConsumerGroups groups) {
    groups.apply(state.read(groups.floor()).resets());
  }

  private static void announce(Connection c, String group) throws Exception {
    try (Statement st = c.createStatement()) {
      st.execute("select queen.group_reset_note_v1('feed', '" + group + "')");
    }
  }

  @Test
  void aResetCommittedAfterOneWithAHigherIdIsStillApplied() throws Exception {
    ConsumerGroups groups = follower(ConsumerGroups.SETTLE);
    try (Connection early = broker.connect();
        Connection late = broker.connect()) {
      early.setAutoCommit(false);
      announce(early, "early"); // takes the lower id, commits last
      announce(late, "late");
      read(groups);
      assertThat(told).containsExactly("late");

      early.commit();
      read(groups);
      assertThat(told).as("the id below the one read first").containsExactly("late", "early");
    }
    read(groups);
    assertThat(told).as("each reset applied once").containsExactly("late", "early");
  }

  @Test
  void theFeedIsReadAboveTheResetsOnceTheyHaveSettled() throws Exception {
    ConsumerGroups groups = follower(Duration.ZERO);
    long head = groups.floor();
    try (Connection c = broker.connect()) {
      announce(c, "a");
      announce(c, "b");
    }
    read(groups);
    assertThat(told).containsExactly("a", "b");
    assertThat(groups.floor()).as("nothing left to wait for").isEqualTo(head + 2);
  }
}
