package queen.bench;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The classic PostgreSQL queue teams embed in their own service, done well: one row per message, a
 * key table whose row is leased with {@code FOR UPDATE SKIP LOCKED} to keep each key (partition) in
 * order, one statement per push, per pop and per ack, messages deleted on ack. Called straight over
 * JDBC with the broker's pool size: no HTTP, no JSON.
 */
final class NaiveTarget implements Target {
  private static final String PUSH =
      "insert into bench_naive.messages (queue, key, txn, payload)"
          + " select ?, u.k, u.t, u.p from unnest(?::text[], ?::text[], ?::bytea[]) as u(k, t, p)";
  private static final String POP =
      "with k as (select nk.key from bench_naive.keys nk"
          + "   where nk.queue = ? and (nk.leased_until is null or nk.leased_until < now())"
          + "     and exists (select 1 from bench_naive.messages m"
          + "                  where m.queue = nk.queue and m.key = nk.key)"
          + "   limit 1 for update skip locked),"
          + " l as (update bench_naive.keys nk set lease = ?, leased_until = now() + interval '60 s'"
          + "   from k where nk.queue = ? and nk.key = k.key returning nk.key)"
          + " select m.id, m.txn, m.payload, l.key from l cross join lateral"
          + "  (select id, txn, payload from bench_naive.messages mm"
          + "    where mm.queue = ? and mm.key = l.key order by mm.id limit ?) m";
  private static final String POP_AUTO_ACK =
      "with k as (select nk.key from bench_naive.keys nk"
          + "   where nk.queue = ? and (nk.leased_until is null or nk.leased_until < now())"
          + "     and exists (select 1 from bench_naive.messages m"
          + "                  where m.queue = nk.queue and m.key = nk.key)"
          + "   limit 1 for update skip locked),"
          + " m as (select mm.id from bench_naive.messages mm, k"
          + "   where mm.queue = ? and mm.key = k.key order by mm.id limit ?)"
          + " delete from bench_naive.messages d using m where d.id = m.id"
          + " returning d.id, d.txn, d.payload, d.key";
  private static final String ACK =
      "with d as (delete from bench_naive.messages where id = any (?))"
          + " update bench_naive.keys set lease = null, leased_until = null"
          + " where queue = ? and key = ? and lease = ?";

  private final Jdbc db;

  NaiveTarget(Jdbc db) {
    this.db = db;
  }

  @Override
  public String name() {
    return "naive";
  }

  @Override
  public void prepare(String queue, int partitions) throws Exception {
    db.exec(
        "create schema if not exists bench_naive",
        "create table if not exists bench_naive.keys (queue text, key text, lease uuid,"
            + " leased_until timestamptz, primary key (queue, key))",
        "create table if not exists bench_naive.messages (id bigserial primary key,"
            + " queue text not null, key text not null, txn text not null, payload bytea not null,"
            + " created_at timestamptz not null default now())",
        "create index if not exists messages_key on bench_naive.messages (queue, key, id)",
        "delete from bench_naive.messages where queue = '" + queue + "'",
        "delete from bench_naive.keys where queue = '" + queue + "'",
        "insert into bench_naive.keys (queue, key) select '"
            + queue
            + "', 'p' || g from generate_series(0, "
            + (partitions - 1)
            + ") g");
  }

  @Override
  public void push(String queue, List<Message> batch) throws Exception {
    try (Connection c = db.connection();
        PreparedStatement ps = c.prepareStatement(PUSH)) {
      ps.setString(1, queue);
      ps.setArray(2, c.createArrayOf("text", batch.stream().map(Message::partition).toArray()));
      ps.setArray(3, c.createArrayOf("text", batch.stream().map(Message::id).toArray()));
      ps.setArray(
          4, c.createArrayOf("bytea", batch.stream().map(Message::payload).toArray(byte[][]::new)));
      ps.executeUpdate();
    }
  }

  /** A leased key and the ids its ack deletes. */
  private record Lease(String queue, String key, UUID lease, Long[] ids) {}

  @Override
  public Delivery pop(String queue, String group, int batch, boolean autoAck, long waitMillis)
      throws Exception {
    UUID lease = UUID.randomUUID();
    try (Connection c = db.connection();
        PreparedStatement ps = c.prepareStatement(autoAck ? POP_AUTO_ACK : POP)) {
      if (autoAck) {
        ps.setString(1, queue);
        ps.setString(2, queue);
        ps.setInt(3, batch);
      } else {
        ps.setString(1, queue);
        ps.setObject(2, lease);
        ps.setString(3, queue);
        ps.setString(4, queue);
        ps.setInt(5, batch);
      }
      List<Delivered> out = new ArrayList<>();
      List<Long> ids = new ArrayList<>();
      String key = null;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
          key = rs.getString(4);
          out.add(
              new Delivered(
                  rs.getString(2),
                  key,
                  Payloads.sentNanos(new String(rs.getBytes(3), StandardCharsets.US_ASCII))));
        }
      }
      if (out.isEmpty()) {
        return null;
      }
      return new Delivery(group, out, new Lease(queue, key, lease, ids.toArray(Long[]::new)));
    }
  }

  @Override
  public void ack(Delivery d) throws Exception {
    Lease l = (Lease) d.ackHandle();
    try (Connection c = db.connection();
        PreparedStatement ps = c.prepareStatement(ACK)) {
      ps.setArray(1, c.createArrayOf("bigint", l.ids()));
      ps.setString(2, l.queue());
      ps.setString(3, l.key());
      ps.setObject(4, l.lease());
      ps.executeUpdate();
    }
  }

  @Override
  public void close() {}
}
