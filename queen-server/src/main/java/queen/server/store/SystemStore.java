package queen.server.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Broker-wide state kept in the database so that every broker sees it. */
public final class SystemStore {
  private static final String STATE = "select * from queen.broker_state_v3(?)";
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
   * @param encryptedQueues the queues configured with {@code encryptionEnabled}
   * @param pushMaintenance push maintenance mode: pushes go to the brokers' local buffers
   * @param payloadKeys the ids of the keys that have sealed payloads (queen.payload_keys)
   */
  public record State(
      boolean popMaintenance,
      Map<String, Integer> minPopWaitMs,
      List<ConsumerGroupStore.Reset> resets,
      Set<String> encryptedQueues,
      boolean pushMaintenance,
      Set<Integer> payloadKeys) {}

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
    String[] encrypted = (String[]) rs.getArray("encrypted_queues").getArray();
    return new State(
        rs.getBoolean("pop_maintenance"),
        Map.copyOf(minPopWait),
        resets,
        Set.of(encrypted),
        rs.getBoolean("push_maintenance"),
        Set.of((Integer[]) rs.getArray("payload_keys").getArray()));
  }

  /** Records that key {@code id} seals payloads (idempotent). */
  public void registerPayloadKey(int id) {
    db.transaction(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "insert into queen.payload_keys (key_id) values (?) on conflict do nothing")) {
            ps.setInt(1, id);
            ps.executeUpdate();
          }
          return null;
        });
  }

  /** The ids of every key that has sealed payloads. */
  public Set<Integer> payloadKeys() {
    return db.transaction(
        c -> {
          Set<Integer> ids = new HashSet<>();
          try (PreparedStatement ps = c.prepareStatement("select key_id from queen.payload_keys");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              ids.add(rs.getInt(1));
            }
          }
          return ids;
        });
  }

  public boolean setPushMaintenance(boolean enabled) {
    return setSwitch("select queen.set_push_maintenance_v1(?)", enabled);
  }

  public boolean setPopMaintenance(boolean enabled) {
    return setSwitch(SET_POP_MAINTENANCE, enabled);
  }

  private boolean setSwitch(String sql, boolean enabled) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setBoolean(1, enabled);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getBoolean(1);
            }
          }
        });
  }
}
