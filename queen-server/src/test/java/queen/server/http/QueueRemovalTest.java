package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.store.Database;
import queen.server.store.QueueRemoval;

/**
 * A queue clear and a queue delete run in transactions of at most RETENTION_BATCH_SIZE segments or
 * dead letters and RETENTION_BATCH_MB of segments: in one, a big queue's held every partition lock
 * until its last segment was gone.
 */
class QueueRemovalTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("RETENTION_BATCH_SIZE", "2"));

  private final Wire wire = new Wire(broker);

  /** Each row deleted from the watched tables notes its transaction. */
  @BeforeAll
  static void watchDeletes() {
    broker.sql("create table public.removal_txns (tbl text, txid bigint)");
    broker.sql(
        "create function public.note_removal() returns trigger language plpgsql as $$"
            + " begin insert into public.removal_txns values (tg_table_name, txid_current());"
            + " return null; end $$");
    for (String table : new String[] {"log_segments", "dead_letters", "log_partitions"}) {
      broker.sql(
          "create trigger note_removal after delete on queen."
              + table
              + " for each row execute function public.note_removal()");
    }
  }

  private long transactions(String table) {
    return broker.sqlLong(
        "select count(distinct txid) from public.removal_txns where tbl = '" + table + "'");
  }

  private long mostInOneTransaction(String table) {
    return broker.sqlLong(
        "select max(n) from (select count(*) as n from public.removal_txns where tbl = '"
            + table
            + "' group by txid) t");
  }

  private void pushes(String queue, String partition, int count) {
    for (int i = 0; i < count; i++) {
      wire.pushNumbered(queue, partition, i, 1); // a segment each
    }
  }

  @Test
  void aClearDeletesTwoSegmentsATransactionAndCountsEveryMessage() {
    broker.sql("truncate public.removal_txns");
    pushes("bclear", "a", 5);
    pushes("bclear", "b", 3);
    JsonNode cleared = broker.delete("/api/v1/queues/bclear/clear").json();
    assertThat(cleared.get("partitionsCleared").asInt()).isEqualTo(2);
    assertThat(cleared.get("messagesDeleted").asInt()).isEqualTo(8);
    assertThat(transactions("log_segments")).as("8 segments, 2 a transaction").isGreaterThan(3);
    assertThat(mostInOneTransaction("log_segments")).isEqualTo(2);
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_segments s join queen.log_partitions p"
                    + " on p.id = s.partition_id join queen.queues q on q.id = p.queue_id"
                    + " where q.name = 'bclear'"))
        .isZero();

    wire.pushNumbered("bclear", "a", 5, 1);
    assertThat(
            Wire.numbers(
                wire.popPartition("bclear", "a", "autoAck=true&batch=10&wait=true&timeout=5000")
                    .json()))
        .as("offsets kept")
        .containsExactly(5);
  }

  @Test
  void aDeleteRemovesMessagesAndDeadLettersInShortTransactionsThenTheQueue() {
    broker.sql("truncate public.removal_txns");
    pushes("bdelete", "a", 5);
    pushes("bdelete", "b", 3);
    for (String partition : new String[] {"a", "b"}) {
      JsonNode popped =
          wire.popPartition("bdelete", partition, "consumerGroup=g&batch=3&wait=true&timeout=5000")
              .json();
      assertThat(wire.ackAll(popped, "dlq", "poison"))
          .allSatisfy(a -> assertThat(a.get("success").asBoolean()).isTrue());
    }
    assertThat(broker.sqlLong("select count(*) from queen.dead_letters")).isEqualTo(6);
    for (String partition : new String[] {"c", "d", "e"}) {
      pushes("bdelete", partition, 1);
    }

    String ids =
        broker.sqlText(
            "select string_agg(quote_literal(p.id::text), ',') from queen.log_partitions p"
                + " join queen.queues q on q.id = p.queue_id where q.name = 'bdelete'");
    JsonNode deleted = broker.delete("/api/v1/resources/queues/bdelete").json();
    assertThat(deleted.get("existed").asBoolean()).isTrue();
    assertThat(transactions("log_segments")).as("8 segments, 2 a transaction").isGreaterThan(3);
    assertThat(transactions("dead_letters")).as("6 dead letters, 2 a transaction").isGreaterThan(2);
    assertThat(mostInOneTransaction("log_segments")).isEqualTo(2);
    assertThat(mostInOneTransaction("dead_letters")).isEqualTo(2);
    // in the queue row's delete, a queue of a million partitions held its pushes for minutes
    assertThat(mostInOneTransaction("log_partitions"))
        .as("5 partitions, 2 a transaction")
        .isEqualTo(2);
    for (String table : new String[] {"log_segments", "dead_letters", "log_consumers"}) {
      assertThat(
              broker.sqlLong(
                  "select count(*) from queen."
                      + table
                      + " where partition_id::text in ("
                      + ids
                      + ")"))
          .as(table)
          .isZero();
    }
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_partitions where id::text in (" + ids + ")"))
        .isZero();
    assertThat(broker.sqlLong("select count(*) from queen.queues where name = 'bdelete'")).isZero();
    assertThat(broker.delete("/api/v1/resources/queues/bdelete").json().get("existed").asBoolean())
        .isFalse();
  }

  /** The queue cleared in transactions of at most {@code bytes} of segments, one at least. */
  private static QueueRemoval.Cleared clearWithin(String queue, long bytes) {
    try (Database db = Database.open(broker.db())) {
      return new QueueRemoval(db, 1_000, bytes).clear(queue, null);
    }
  }

  // as retention's: 1,000 segments of about 1 MB in one transaction held a push to them 2.2 s
  @Test
  void aClearDeletesWithinTheByteBudgetButAtLeastOneSegmentATransaction() {
    broker.sql("truncate public.removal_txns");
    pushes("weighed", "a", 3);
    pushes("weighed", "b", 2);
    QueueRemoval.Cleared cleared = clearWithin("weighed", 1);
    assertThat(cleared.messages()).isEqualTo(5);
    assertThat(cleared.partitions()).isEqualTo(2);
    assertThat(transactions("log_segments")).isEqualTo(5);
    assertThat(mostInOneTransaction("log_segments")).isEqualTo(1);
  }

  // the exemption is the transaction's first segment, not each partition's
  @Test
  void onlyAClearTransactionsFirstSegmentMayPassTheByteBudget() {
    broker.sql("truncate public.removal_txns");
    pushes("budget", "small", 1);
    // a partition cleared after small: partitions go in id order
    String big =
        broker.sqlText(
            "select 'big-' || i from generate_series(0, 99) i, queen.queues q where q.name ="
                + " 'budget' and queen.partition_uuid(q.id, 'big-' || i)"
                + " > queen.partition_uuid(q.id, 'small') order by i limit 1");
    wire.pushRandom("budget", big, "big-1");
    long small =
        broker.sqlLong(
            "select octet_length(s.blob) from queen.log_segments s"
                + " join queen.log_partitions p on p.id = s.partition_id"
                + " join queen.queues q on q.id = p.queue_id"
                + " where q.name = 'budget' and p.name = 'small'");
    assertThat(clearWithin("budget", small + 10).messages()).isEqualTo(2);
    assertThat(mostInOneTransaction("log_segments"))
        .as("small's segment, then big's alone")
        .isEqualTo(1);
  }
}
