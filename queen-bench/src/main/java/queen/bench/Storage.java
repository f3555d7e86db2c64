package queen.bench;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * What a stored message costs on disk: the size of the target's schema (tables, indexes, TOAST,
 * free-space and visibility maps) before and after pushing a known number of messages, in the two
 * shapes that bound it: pushes that carry many messages per partition, and pushes spread so thin
 * that every segment holds one message.
 */
final class Storage {
  /** Messages per push request, as in the measurements of the storage issue. */
  static final int PER_REQUEST = 100;

  /** Partitions of the queue. */
  static final int PARTITIONS = 200;

  private Storage() {}

  /** The two shapes: messages per partition in one push. */
  enum Shape {
    /** 100 messages over 2 partitions: 50 per partition per push. */
    BATCHED(50),
    /** 100 messages over 100 partitions: one message per segment. */
    SPREAD(1);

    final int perPartition;

    Shape(int perPartition) {
      this.perPartition = perPartition;
    }
  }

  static Result run(Target target, Jdbc db, String schema, Shape shape, int messages)
      throws Exception {
    String q = "bench-storage-" + shape.name().toLowerCase() + "-" + System.currentTimeMillis();
    target.prepare(q, PARTITIONS);
    Map<String, Long> before = sizes(db, schema);
    Random rnd = new Random(42);
    long t0 = System.nanoTime();
    int partitionsPerRequest = PER_REQUEST / shape.perPartition;
    for (int sent = 0, request = 0; sent < messages; request++) {
      List<Target.Message> batch = new ArrayList<>(PER_REQUEST);
      for (int i = 0; i < PER_REQUEST && sent < messages; i++, sent++) {
        int partition = (request * partitionsPerRequest + i / shape.perPartition) % PARTITIONS;
        // transaction ids as Queen's clients make them: UUIDs
        String txn = new UUID(rnd.nextLong(), rnd.nextLong()).toString();
        batch.add(new Target.Message("p" + partition, txn, order(sent, rnd)));
      }
      target.push(q, batch);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    Map<String, Long> after = sizes(db, schema);
    long total = 0;
    Map<String, Object> perTable = new LinkedHashMap<>();
    for (Map.Entry<String, Long> e : after.entrySet()) {
      long grown = e.getValue() - before.getOrDefault(e.getKey(), 0L);
      total += grown;
      if (grown > 0) {
        perTable.put(e.getKey(), Math.round(10.0 * grown / messages) / 10.0);
      }
    }
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("bytesPerMessage", Math.round(10.0 * total / messages) / 10.0);
    extra.put("bytesPerMessageByTable", perTable);
    return new Result(
        "storage-" + shape.name().toLowerCase(),
        target.name(),
        Result.params(
            "messages",
            messages,
            "perRequest",
            PER_REQUEST,
            "perPartitionPerPush",
            shape.perPartition,
            "partitions",
            PARTITIONS,
            "payloadBytes",
            order(0, new Random(42)).length),
        seconds,
        messages,
        messages / seconds,
        (messages + PER_REQUEST - 1) / PER_REQUEST,
        0,
        0,
        0,
        0,
        extra);
  }

  /**
   * A JSON order of about 75 bytes with the variety of real data (ids, amounts, codes), so that
   * compression sees what it would see in production rather than a run of one letter.
   */
  static byte[] order(int n, Random rnd) {
    String json =
        String.format(
            "{\"orderId\":%d,\"customer\":\"c-%05d\",\"amount\":%d.%02d,\"currency\":\"%s\",\"items\":%d}",
            1_000_000 + n,
            rnd.nextInt(100_000),
            rnd.nextInt(1000),
            rnd.nextInt(100),
            rnd.nextBoolean() ? "EUR" : "USD",
            1 + rnd.nextInt(9));
    return json.getBytes(StandardCharsets.US_ASCII);
  }

  /** Bytes on disk of every table of a schema, with its indexes, TOAST and maps. */
  static Map<String, Long> sizes(Jdbc db, String schema) throws Exception {
    Map<String, Long> out = new LinkedHashMap<>();
    try (Connection c = db.connection();
        PreparedStatement ps =
            c.prepareStatement(
                "select c.relname, pg_total_relation_size(c.oid) from pg_class c"
                    + " join pg_namespace n on n.oid = c.relnamespace"
                    + " where n.nspname = ? and c.relkind = 'r' order by 2 desc")) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
    return out;
  }

  /** The total of {@link #sizes}. */
  static long total(Jdbc db, String schema) throws Exception {
    return sizes(db, schema).values().stream().mapToLong(Long::longValue).sum();
  }
}
