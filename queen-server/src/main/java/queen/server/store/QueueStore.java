package queen.server.store;

import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/** Queue configuration and partition resolution. */
public final class QueueStore {
  private final Database db;

  public QueueStore(Database db) {
    this.db = db;
  }

  /** A configured queue, and whether it encrypted its payloads before the configure. */
  public record Configured(ConfiguredQueue queue, boolean wasEncrypted) {}

  /**
   * Creates or fully replaces a queue's options. {@code optionsJson} must already be validated:
   * every known key of the right JSON type.
   *
   * @param mayDisableEncryption whether the configure may switch the queue's encryption off; when
   *     not, an encrypting queue keeps encrypting whatever the options say
   */
  public Configured configure(
      String name,
      String namespace,
      String task,
      String optionsJson,
      boolean mayDisableEncryption) {
    return db.transaction(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "select (queue).*, default_partition_id, was_encrypted"
                      + " from queen.configure_queue_v2(?, ?, ?, ?::jsonb, ?)")) {
            ps.setString(1, name);
            ps.setString(2, namespace);
            ps.setString(3, task);
            ps.setString(4, optionsJson);
            ps.setBoolean(5, mayDisableEncryption);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              QueueOptions options =
                  new QueueOptions(
                      rs.getInt("lease_time"),
                      rs.getInt("retry_limit"),
                      rs.getInt("retry_delay"),
                      rs.getInt("priority"),
                      rs.getInt("max_size"),
                      rs.getInt("ttl"),
                      rs.getBoolean("dead_letter_queue"),
                      rs.getBoolean("dlq_after_max_retries"),
                      rs.getInt("delayed_processing"),
                      rs.getInt("window_buffer"),
                      rs.getBoolean("retention_enabled"),
                      rs.getInt("retention_seconds"),
                      rs.getInt("completed_retention_seconds"),
                      rs.getInt("max_wait_time_seconds"),
                      rs.getBoolean("encryption_enabled"),
                      rs.getInt("min_pop_wait_time"));
              return new Configured(
                  new ConfiguredQueue(
                      rs.getObject("id", UUID.class),
                      rs.getObject("default_partition_id", UUID.class),
                      rs.getString("name"),
                      rs.getString("namespace"),
                      rs.getString("task"),
                      options),
                  rs.getBoolean("was_encrypted"));
            }
          }
        });
  }

  /**
   * Resolves partitions by name, creating queues and partitions that do not exist yet, in its own
   * short transaction (see {@code queen.log_ensure_partitions_v1}).
   */
  public Map<PartitionKey, PartitionRef> ensurePartitions(Collection<PartitionKey> keys) {
    return db.autocommit(
        c -> {
          String[] queues = keys.stream().map(PartitionKey::queue).toArray(String[]::new);
          String[] partitions = keys.stream().map(PartitionKey::partition).toArray(String[]::new);
          Array qa = c.createArrayOf("text", queues);
          Array pa = c.createArrayOf("text", partitions);
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.log_ensure_partitions_v1(?, ?)")) {
            ps.setArray(1, qa);
            ps.setArray(2, pa);
            Map<PartitionKey, PartitionRef> refs = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                PartitionRef ref =
                    new PartitionRef(
                        rs.getObject("queue_id", UUID.class),
                        rs.getObject("partition_id", UUID.class),
                        rs.getString("queue_name"),
                        rs.getString("partition_name"));
                refs.put(new PartitionKey(ref.queue(), ref.partition()), ref);
              }
            }
            return refs;
          }
        });
  }
}
