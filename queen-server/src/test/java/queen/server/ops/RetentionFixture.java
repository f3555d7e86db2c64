package queen.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.store.Database;
import queen.server.store.RetentionStore;

/**
 * What the retention contract drives its broker with: one retention cycle at a clock the test sets,
 * its counters, and reads of the segments, cursors and dead letters of a queue.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RetentionFixture {
  /** The broker under test: plain PostgreSQL or Citus, by subclass. */
  abstract TestBroker broker();

  static final Retention.Settings ONE_AT_A_TIME =
      new Retention.Settings(
          Duration.ofHours(1), 1, 16L << 20, Retention.Vacuum.AUTO, Duration.ZERO);

  final Wire wire = new Wire(broker());
  Database db;

  @BeforeAll
  void open() {
    db = Database.open(broker().db());
  }

  @AfterAll
  void close() {
    db.close();
  }

  /**
   * One retention cycle at {@code now}; its metrics. Test methods share the database, so each reads
   * what the cycle deleted from its own queue's counters.
   */
  SimpleMeterRegistry runAt(Instant now) {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    retention(now, meters).runOnce();
    return meters;
  }

  static long deleted(SimpleMeterRegistry meters, String queue) {
    return (long) meters.counter("queen_retention_deleted_segments", "queue", queue).count();
  }

  static long deadLetters(SimpleMeterRegistry meters, String queue) {
    return (long) meters.counter("queen_retention_deleted_dead_letters", "queue", queue).count();
  }

  Retention retention(Instant now, SimpleMeterRegistry meters) {
    return new Retention(new RetentionStore(db), ONE_AT_A_TIME, () -> now, meters, (q, n) -> {});
  }

  void retained(String queue, int seconds, int completedSeconds) {
    wire.configure(
        queue,
        object()
            .put("retentionEnabled", true)
            .put("retentionSeconds", seconds)
            .put("completedRetentionSeconds", completedSeconds));
  }

  JsonNode push(String queue, String partition, String txn) {
    TestBroker.Reply r =
        broker().post("/api/v1/push", Wire.items(List.of(item(queue, partition, txn, object()))));
    assertThat(r.status()).as("201 when stored, 200 when a duplicate").isIn(200, 201);
    return r.json();
  }

  String deadIn(String queue) {
    return "select count(*) from queen.dead_letters d join queen.log_partitions p on p.id ="
        + " d.partition_id join queen.queues q on q.id = p.queue_id where q.name = '"
        + queue
        + "'";
  }

  /** Pops {@code count} messages of the partition for the group and acks them. */
  void consume(String queue, String partition, String group, int count) {
    JsonNode got =
        wire.popPartition(queue, partition, "batch=" + count + "&consumerGroup=" + group).json();
    assertThat(Wire.numbers(got)).hasSize(count);
    assertThat(wire.ackAll(got).get(0).get("success").asBoolean()).isTrue();
  }

  String pid(String queue, String partition) {
    return "(select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
        + " where q.name = '"
        + queue
        + "' and p.name = '"
        + partition
        + "')";
  }

  List<Instant> created(String queue, String partition) {
    List<Instant> out = new ArrayList<>();
    query(
        "select created_at from queen.log_segments where partition_id = "
            + pid(queue, partition)
            + " order by base_offset",
        rs -> out.add(rs.getObject(1, OffsetDateTime.class).toInstant()));
    return out;
  }

  List<Long> bases(String queue, String partition) {
    List<Long> out = new ArrayList<>();
    query(
        "select base_offset from queen.log_segments where partition_id = "
            + pid(queue, partition)
            + " order by base_offset",
        rs -> out.add(rs.getLong(1)));
    return out;
  }

  long segments(String queue) {
    return broker()
        .sqlLong(
            "select count(*) from queen.log_segments s join queen.log_partitions p on p.id ="
                + " s.partition_id join queen.queues q on q.id = p.queue_id where q.name = '"
                + queue
                + "'");
  }

  long retainedFrom(String queue, String partition) {
    return broker()
        .sqlLong(
            "select retained_from from queen.log_partitions where id = " + pid(queue, partition));
  }

  long committed(String queue, String partition, String group) {
    return broker()
        .sqlLong(
            "select committed from queen.log_consumers where partition_id = "
                + pid(queue, partition)
                + " and consumer_group = '"
                + group
                + "'");
  }

  private interface Row {
    void read(ResultSet rs) throws Exception;
  }

  void query(String sql, Row row) {
    try (Connection c = broker().connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        row.read(rs);
      }
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }
}
