package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A big push read a few messages at a time: PostgreSQL sends its blob to the first pop only, and a
 * stub to the pops after it, which the broker answers from the push it keeps decoded. A broker that
 * does not hold it reads the blob in a second call, and a blob rewritten since (a message delete)
 * is never answered from what was decoded before.
 */
abstract class BigPushStubContract {
  abstract TestBroker broker();

  private static final String READS = "queen_segment_blob_reads_total";

  private void pushBig(String queue) {
    new Wire(broker()).pushBig(queue);
    assertThat(broker().sqlLong(blobLength(queue))).as("a big blob").isGreaterThan(8192);
  }

  private static String blobLength(String queue) {
    return "select octet_length(s.blob) from queen.log_segments s join queen.log_partitions p"
        + " on p.id = s.partition_id join queen.queues q on q.id = p.queue_id where q.name = '"
        + queue
        + "'";
  }

  /** Pops and acks one message at a time through {@code at} (null: the test's broker). */
  private List<Integer> popOneAtATime(Broker at, String queue, String group, int pops) {
    List<Integer> seen = new ArrayList<>();
    String path = "/api/v1/pop/queue/" + queue + "/partition/p?batch=1&consumerGroup=" + group;
    for (int i = 0; i < pops; i++) {
      TestBroker.Reply r = at == null ? broker().get(path) : broker().get(at, path);
      if (r.status() == 200) {
        JsonNode popped = r.json();
        seen.addAll(Wire.numbers(popped));
        // acked where it was popped: another broker learns of the release by a hint, later
        ObjectNode acks = Wire.acks(popped, "completed", null);
        JsonNode answer =
            (at == null
                    ? broker().post("/api/v1/ack/batch", acks)
                    : broker().post(at, "/api/v1/ack/batch", acks))
                .json();
        assertThat(answer).allSatisfy(a -> assertThat(a.get("success").asBoolean()).isTrue());
      }
    }
    return seen;
  }

  @Test
  void thePopsAfterTheFirstGetAStubThatTheKeptPushAnswers() {
    pushBig("stubbed");
    double hits = broker().metric("queen_segment_cache_hits_total", "");
    double reads = broker().metric(READS, "");
    assertThat(popOneAtATime(null, "stubbed", "a", 20))
        .isEqualTo(IntStream.range(0, 20).boxed().toList());
    assertThat(broker().metric("queen_segment_cache_hits_total", "") - hits).isEqualTo(19);
    assertThat(broker().metric(READS, "") - reads).as("no blob read again").isZero();

    // what PostgreSQL sends: the blob to a pop from the first frame, a 9-byte stub after it, and
    // the blob again to a broker that keeps no push that big
    String pop =
        "select octet_length(blob) from queen.log_pop_specific_v1('stubbed', 'p', 'sql',"
            + " gen_random_uuid(), 1, true, p_kept_bytes => %d)";
    long stored = broker().sqlLong(blobLength("stubbed"));
    assertThat(broker().sqlLong(pop.formatted(4 << 20))).isEqualTo(stored);
    assertThat(broker().sqlLong(pop.formatted(4 << 20))).isEqualTo(9);
    assertThat(broker().sqlLong(pop.formatted(0))).isEqualTo(stored);
    assertThat(broker().sqlLong(pop.formatted(1024)))
        .as("decoded, over the kept size")
        .isEqualTo(stored);
  }

  @Test
  void aBrokerThatWasSentAStubOfAPushItNeverDecodedReadsTheBlob() {
    pushBig("elsewhere");
    assertThat(popOneAtATime(null, "elsewhere", "a", 1)).containsExactly(0);
    try (Broker other = broker().startAnother()) {
      double reads = broker().metric(other, READS, "");
      assertThat(popOneAtATime(other, "elsewhere", "a", 1)).containsExactly(1);
      assertThat(broker().metric(other, READS, "") - reads)
          .as("read in a second call")
          .isEqualTo(1);
      assertThat(popOneAtATime(other, "elsewhere", "a", 2)).containsExactly(2, 3);
      assertThat(broker().metric(other, READS, "") - reads).as("then kept").isEqualTo(1);
    }
  }

  @Test
  void aMessageDeletedAfterThePushWasDecodedIsNotDeliveredFromIt() {
    pushBig("deleted");
    assertThat(popOneAtATime(null, "deleted", "a", 1)).containsExactly(0);
    String partition =
        broker()
            .sqlText(
                "select p.id::text from queen.log_partitions p join queen.queues q"
                    + " on q.id = p.queue_id where q.name = 'deleted'");
    assertThat(broker().delete("/api/v1/messages/" + partition + "/deleted-1").status())
        .isEqualTo(200);
    double reads = broker().metric(READS, "");
    // the stub names the rewritten blob: the decoded push does not answer for it
    assertThat(popOneAtATime(null, "deleted", "a", 4)).containsExactly(2, 3, 4);
    assertThat(broker().metric(READS, "") - reads).isEqualTo(1);
  }

  @Test
  void anAutoAckPopIsAlwaysSentTheBlob() {
    pushBig("auto");
    String path = "/api/v1/pop/queue/auto/partition/p?batch=1&autoAck=true";
    assertThat(Wire.numbers(broker().get(path).json())).containsExactly(0);
    try (Broker other = broker().startAnother()) {
      double reads = broker().metric(other, READS, "");
      assertThat(Wire.numbers(broker().get(other, path).json())).containsExactly(1);
      // its claim committed the cursor: a second read that failed would have lost the message
      assertThat(broker().metric(other, READS, "") - reads).as("no stub, no second read").isZero();
    }
  }
}
