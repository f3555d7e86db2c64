package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.HashMap;
import java.util.Map;

/** Broker-wide state kept in the database so that every broker sees it. */
public final class SystemStore {
  private static final String STATE = "select * from queen.broker_state_v1()";
  private static final String SET_POP_MAINTENANCE = "select queen.set_pop_maintenance_v1(?)";

  private final Database db;

  public SystemStore(Database db) {
    this.db = db;
  }

  /**
   * What the brokers refresh periodically.
   *
   * @param minPopWaitMs the queues that configured a minimum pop wait, in milliseconds
   */
  public record State(boolean popMaintenance, Map<String, Integer> minPopWaitMs) {}

  public State read() {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(STATE);
              ResultSet rs = ps.executeQuery()) {
            rs.next();
            String[] names = (String[]) rs.getArray("min_pop_wait_queues").getArray();
            Integer[] waits = (Integer[]) rs.getArray("min_pop_wait_ms").getArray();
            Map<String, Integer> minPopWait = new HashMap<>();
            for (int i = 0; i < names.length; i++) {
              minPopWait.put(names[i], waits[i]);
            }
            return new State(rs.getBoolean("pop_maintenance"), Map.copyOf(minPopWait));
          }
        });
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
