package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Broker-wide state kept in the database so that every broker sees it. */
public final class SystemStore {
  private static final String STATE = "select * from queen.broker_state_v2(?)";
  private static final String SET_POP_MAINTENANCE = "select queen.set_pop_maintenance_v1(?)";

  private final Database db;

  public SystemStore(Database db) {
    this.db = db;
  }

  /**
   * What the brokers refresh periodically.
   *
   * @param minPopWaitMs the queues that configured a minimum pop wait, in milliseconds
   * @param resets the consumer-group resets announced after the id asked for, oldest first
   */
  public record State(
      boolean popMaintenance,
      Map<String, Integer> minPopWaitMs,
      List<ConsumerGroupStore.Reset> resets) {}

  /** The switches alone, fresh (no resets). */
  public State switches() {
    return read(Long.MAX_VALUE);
  }

  /** The state, with the consumer-group resets announced after {@code resetsAfter}. */
  public State read(long resetsAfter) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(STATE)) {
            ps.setLong(1, resetsAfter);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return state(rs);
            }
          }
        });
  }

  private static State state(ResultSet rs) throws SQLException {
    String[] names = (String[]) rs.getArray("min_pop_wait_queues").getArray();
    Integer[] waits = (Integer[]) rs.getArray("min_pop_wait_ms").getArray();
    Map<String, Integer> minPopWait = new HashMap<>();
    for (int i = 0; i < names.length; i++) {
      minPopWait.put(names[i], waits[i]);
    }
    Long[] ids = (Long[]) rs.getArray("reset_ids").getArray();
    String[] queues = (String[]) rs.getArray("reset_queues").getArray();
    String[] groups = (String[]) rs.getArray("reset_groups").getArray();
    List<ConsumerGroupStore.Reset> resets = new ArrayList<>(ids.length);
    for (int i = 0; i < ids.length; i++) {
      resets.add(new ConsumerGroupStore.Reset(ids[i], queues[i], groups[i]));
    }
    return new State(rs.getBoolean("pop_maintenance"), Map.copyOf(minPopWait), resets);
  }

  public boolean setPopMaintenance(boolean enabled) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(SET_POP_MAINTENANCE)) {
            ps.setBoolean(1, enabled);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getBoolean(1);
            }
          }
        });
  }
}
