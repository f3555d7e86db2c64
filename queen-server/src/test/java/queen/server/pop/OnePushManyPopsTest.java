package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * One push read a message at a time, over HTTP: each pop after the first reads the push decoded by
 * the one before, and a message deleted meanwhile is not delivered from what was decoded.
 */
class OnePushManyPopsTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  /**
   * Pops and acks one message at a time for the group until it has {@code count}, then checks that
   * nothing is left. A pop whose one message was deleted answers 204 and passes it.
   */
  private List<Integer> drain(String queue, String group, int count) {
    List<Integer> seen = new ArrayList<>();
    for (int pops = 0; seen.size() < count && pops < 3 * count; pops++) {
      TestBroker.Reply r = wire.popPartition(queue, "p", "batch=1&consumerGroup=" + group);
      if (r.status() == 200) {
        JsonNode popped = r.json();
        seen.addAll(Wire.numbers(popped));
        assertThat(wire.ackAll(popped))
            .allSatisfy(a -> assertThat(a.get("success").asBoolean()).isTrue());
      }
    }
    assertThat(wire.popPartition(queue, "p", "batch=1&consumerGroup=" + group).status())
        .as("drained")
        .isEqualTo(204);
    return seen;
  }

  @Test
  void aPushReadOneMessageAtATimeIsDecodedOnceAndStaysTrueToDeletes() {
    wire.pushNumbered("one-push", "p", 0, 60);
    double before = broker.metric("queen_segment_cache_hits_total", "");
    List<Integer> first = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      JsonNode popped = wire.popPartition("one-push", "p", "batch=1&consumerGroup=a").json();
      first.addAll(Wire.numbers(popped));
      wire.ackAll(popped);
    }
    assertThat(first)
        .containsExactlyElementsOf(java.util.stream.IntStream.range(0, 20).boxed().toList());
    assertThat(broker.metric("queen_segment_cache_hits_total", "") - before)
        .as("every pop after the first read the push decoded before")
        .isEqualTo(19);

    String partition =
        broker.sqlText(
            "select p.id::text from queen.log_partitions p join queen.queues q"
                + " on q.id = p.queue_id where q.name = 'one-push'");
    assertThat(broker.delete("/api/v1/messages/" + partition + "/one-push-p-30").status())
        .isEqualTo(200);

    List<Integer> rest = drain("one-push", "a", 39);
    List<Integer> expected = new ArrayList<>();
    for (int n = 20; n < 60; n++) {
      if (n != 30) {
        expected.add(n);
      }
    }
    assertThat(rest).as("once each, in order, not the deleted one").isEqualTo(expected);
    assertThat(drain("one-push", "b", 59)).as("another group").doesNotContain(30).hasSize(59);
  }
}
