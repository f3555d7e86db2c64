package queen.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The database alone doing the broker's minimum work for the same messages, over JDBC, without
 * HTTP, JSON or a broker: per push one partition-row update plus one segment-sized row; per pop one
 * cursor update (claim) returning the segment rows; per ack one cursor update. The blob is the
 * payloads laid end to end, about the size of the broker's segment. Consumers pick partitions at
 * random instead of searching for work, which the broker has to do.
 */
final class CeilingTarget implements Target {
  private static final String PUSH =
      "with p as (update bench_ceiling.partitions set last_offset = last_offset + ?"
          + "   where queue = ? and name = ? returning id, last_offset)"
          + " insert into bench_ceiling.segments"
          + " select p.id, p.last_offset - ? + 1, p.last_offset, ?, clock_timestamp(), ? from p";
  private static final String POP =
      "with c as (update bench_ceiling.cursors cc set lease = ?, lease_until = now() + interval"
          + " '60 s' from bench_ceiling.partitions p"
          + "   where p.queue = ? and p.name = ? and cc.partition_id = p.id and cc.grp = ?"
          + "     and cc.committed < p.last_offset"
          + "     and (cc.lease is null or cc.lease_until < now())"
          + "   returning cc.partition_id, cc.committed)"
          + " select c.partition_id, c.committed, s.base_offset, s.msg_count, s.blob"
          + " from c join lateral ("
          + "   (select * from bench_ceiling.segments ss where ss.partition_id = c.partition_id"
          + "      and ss.base_offset <= c.committed + 1 order by ss.base_offset desc limit 1)"
          + "   union all"
          + "   (select * from bench_ceiling.segments ss where ss.partition_id = c.partition_id"
          + "      and ss.base_offset > c.committed + 1 and ss.base_offset <= c.committed + ?"
          + "    order by ss.base_offset)) s on true";
  private static final String ACK =
      "update bench_ceiling.cursors set committed = ?, lease = null, lease_until = null"
          + " where partition_id = ? and grp = ? and lease = ?";

  private final Jdbc db;
  private final ConcurrentHashMap<String, Integer> partitions = new ConcurrentHashMap<>();

  CeilingTarget(Jdbc db) {
    this.db = db;
  }

  @Override
  public String name() {
    return "ceiling";
  }

  @Override
  public void prepare(String queue, int count) throws Exception {
    db.exec(
        "create schema if not exists bench_ceiling",
        "create table if not exists bench_ceiling.partitions (id bigserial primary key,"
            + " queue text, name text, last_offset bigint not null default -1, unique (queue, name))",
        "create table if not exists bench_ceiling.segments (partition_id bigint, base_offset"
            + " bigint, end_offset bigint, msg_count int, created_at timestamptz, blob bytea,"
            + " primary key (partition_id, base_offset))",
        "create table if not exists bench_ceiling.cursors (partition_id bigint, grp text,"
            + " committed bigint not null default -1, lease uuid, lease_until timestamptz,"
            + " primary key (partition_id, grp))",
        "delete from bench_ceiling.segments where partition_id in"
            + " (select id from bench_ceiling.partitions where queue = '"
            + queue
            + "')",
        "delete from bench_ceiling.cursors where partition_id in"
            + " (select id from bench_ceiling.partitions where queue = '"
            + queue
            + "')",
        "delete from bench_ceiling.partitions where queue = '" + queue + "'",
        "insert into bench_ceiling.partitions (queue, name) select '"
            + queue
            + "', 'p' || g from generate_series(0, "
            + (count - 1)
            + ") g");
    partitions.put(queue, count);
  }

  /** Cursors of a group are created up front: the broker's first contact is not measured. */
  void prepareGroup(String queue, String group) throws Exception {
    db.exec(
        "insert into bench_ceiling.cursors (partition_id, grp) select id, '"
            + group
            + "' from bench_ceiling.partitions where queue = '"
            + queue
            + "' on conflict do nothing");
  }

  @Override
  public void push(String queue, List<Message> batch) throws Exception {
    // one segment per partition of the batch, as the broker writes them
    java.util.Map<String, List<Message>> byPartition = new java.util.TreeMap<>();
    for (Message m : batch) {
      byPartition.computeIfAbsent(m.partition(), k -> new ArrayList<>()).add(m);
    }
    try (Connection c = db.connection();
        PreparedStatement ps = c.prepareStatement(PUSH)) {
      c.setAutoCommit(byPartition.size() == 1);
      for (var e : byPartition.entrySet()) {
        int n = e.getValue().size();
        ps.setInt(1, n);
        ps.setString(2, queue);
        ps.setString(3, e.getKey());
        ps.setInt(4, n);
        ps.setInt(5, n);
        ps.setBytes(6, blob(e.getValue()));
        ps.executeUpdate();
      }
      if (!c.getAutoCommit()) {
        c.commit();
        c.setAutoCommit(true);
      }
    }
  }

  private static byte[] blob(List<Message> messages) {
    int size = 0;
    for (Message m : messages) {
      size += m.payload().length + m.id().length() + 16;
    }
    // id, a 16-byte message id, payload: about what a frame holds
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(size);
    for (Message m : messages) {
      b.put(m.id().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      b.position(b.position() + 16);
      b.put(m.payload());
    }
    return b.array();
  }

  /** The claimed cursor and where its ack moves it. */
  private record Claimed(long partitionId, UUID lease, long end) {}

  @Override
  public Delivery pop(String queue, String group, int batch, boolean autoAck, long waitMillis)
      throws Exception {
    int count = partitions.get(queue);
    String partition = "p" + ThreadLocalRandom.current().nextInt(count);
    UUID lease = UUID.randomUUID();
    try (Connection c = db.connection();
        PreparedStatement ps = c.prepareStatement(POP)) {
      c.setAutoCommit(!autoAck);
      ps.setObject(1, lease);
      ps.setString(2, queue);
      ps.setString(3, partition);
      ps.setString(4, group);
      ps.setInt(5, batch);
      List<Delivered> out = new ArrayList<>();
      long pid = -1;
      long end = -1;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next() && out.size() < batch) {
          pid = rs.getLong(1);
          long committed = rs.getLong(2);
          long base = rs.getLong(3);
          int n = rs.getInt(4);
          rs.getBytes(5);
          for (int i = 0; i < n && out.size() < batch; i++) {
            long offset = base + i;
            if (offset > committed) {
              out.add(new Delivered(Long.toString(offset), partition, 0));
              end = offset;
            }
          }
        }
      }
      if (autoAck && end >= 0) {
        try (PreparedStatement commit = c.prepareStatement(ACK)) {
          commit.setLong(1, end);
          commit.setLong(2, pid);
          commit.setString(3, group);
          commit.setObject(4, lease);
          commit.executeUpdate();
        }
      }
      if (autoAck) {
        c.commit();
        c.setAutoCommit(true);
      } else if (out.isEmpty() && pid >= 0) {
        release(c, pid, group);
      }
      return out.isEmpty() ? null : new Delivery(group, out, new Claimed(pid, lease, end));
    }
  }

  private static void release(Connection c, long pid, String group) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "update bench_ceiling.cursors set lease = null where partition_id = ? and grp = ?")) {
      ps.setLong(1, pid);
      ps.setString(2, group);
      ps.executeUpdate();
    }
  }

  @Override
  public void ack(Delivery d) throws Exception {
    Claimed claimed = (Claimed) d.ackHandle();
    try (Connection c = db.connection();
        PreparedStatement ps = c.prepareStatement(ACK)) {
      ps.setLong(1, claimed.end());
      ps.setLong(2, claimed.partitionId());
      ps.setString(3, d.group());
      ps.setObject(4, claimed.lease());
      ps.executeUpdate();
    }
  }

  @Override
  public void close() {}
}
