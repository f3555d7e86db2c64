package queen.server.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Traces recorded against messages: written by consumers, read by message and by name. */
public final class TraceStore {
  private final Database db;

  public TraceStore(Database db) {
    this.db = db;
  }

  /** One trace; {@code data} is its JSON text. */
  public record Trace(
      UUID id,
      String eventType,
      String data,
      String consumerGroup,
      String workerId,
      Instant createdAt,
      List<String> names) {}

  /** A trace found by name, with where its message lives. */
  public record Named(
      Trace trace,
      String transactionId,
      UUID partitionId,
      long offset,
      String queue,
      String partition) {}

  /** A trace name in use. */
  public record Name(String name, long traces, long messages, Instant lastSeen) {}

  /** Records a trace of the message at {@code offset}; answers when it was recorded. */
  public Instant add(
      UUID id,
      MessageStore.Stored message,
      String transactionId,
      String group,
      String worker,
      String eventType,
      String dataJson,
      List<String> names) {
    return db.autocommit(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("select queen.trace_add_v1(?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)")) {
            ps.setObject(1, id);
            ps.setObject(2, message.partitionId());
            ps.setLong(3, message.offset());
            ps.setString(4, transactionId);
            ps.setString(5, group);
            ps.setString(6, worker);
            ps.setString(7, eventType);
            ps.setString(8, dataJson);
            ps.setArray(9, c.createArrayOf("text", names.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return Sql.instant(rs, "trace_add_v1");
            }
          }
        });
  }

  /** The traces of the message at {@code offset} of the partition, oldest first. */
  public List<Trace> of(UUID partitionId, long offset) {
    return db.autocommit(
        c -> {
          List<Trace> out = new ArrayList<>();
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.traces_of_v1(?, ?)")) {
            ps.setObject(1, partitionId);
            ps.setLong(2, offset);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(trace(rs));
              }
            }
          }
          return out;
        });
  }

  /** A page of the traces carrying {@code name}, newest first. */
  public Page<Named> byName(String name, int limit, int offset) {
    return db.autocommit(
        c -> {
          List<Named> out = new ArrayList<>();
          long total = 0;
          try (PreparedStatement ps =
              c.prepareStatement("select * from queen.traces_by_name_v1(?, ?, ?)")) {
            ps.setString(1, name);
            ps.setInt(2, limit);
            ps.setInt(3, offset);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                total = rs.getLong("total");
                out.add(
                    new Named(
                        trace(rs),
                        rs.getString("transaction_id"),
                        rs.getObject("partition_id", UUID.class),
                        rs.getLong("msg_offset"),
                        rs.getString("queue_name"),
                        rs.getString("partition_name")));
              }
            }
          }
          return new Page<>(out, out.isEmpty() ? count(c, name) : total);
        });
  }

  /** A page of the names in use, most recently used first. */
  public Page<Name> names(int limit, int offset) {
    return db.autocommit(c -> Page.read((l, o) -> names(c, l, o), limit, offset));
  }

  private static Page<Name> names(Connection c, int limit, int offset) throws SQLException {
    List<Name> out = new ArrayList<>();
    long total = 0;
    try (PreparedStatement ps = c.prepareStatement("select * from queen.trace_names_v1(?, ?)")) {
      ps.setInt(1, limit);
      ps.setInt(2, offset);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          total = rs.getLong("total");
          out.add(
              new Name(
                  rs.getString("trace_name"),
                  rs.getLong("trace_count"),
                  rs.getLong("message_count"),
                  Sql.instant(rs, "last_seen")));
        }
      }
    }
    return new Page<>(out, total);
  }

  private static long count(Connection c, String name) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("select count(*) from queen.message_trace_names where trace_name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static Trace trace(ResultSet rs) throws SQLException {
    return new Trace(
        rs.getObject("id", UUID.class),
        rs.getString("event_type"),
        rs.getString("data"),
        rs.getString("consumer_group"),
        rs.getString("worker_id"),
        Sql.instant(rs, "created_at"),
        List.of((String[]) rs.getArray("trace_names").getArray()));
  }
}
