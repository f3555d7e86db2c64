package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A stored push that cannot be decoded (a flipped byte fails its checksum) fails the pops of its
 * partition with an answer that names it and the way past it, and no other partition's.
 */
class CorruptSegmentTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void aPushThatCannotBeReadIsNamedAndLeavesOtherPartitionsAlone() {
    wire.pushNumbered("broken", "bad", 0, 5);
    wire.pushNumbered("broken", "good", 0, 5);
    broker.sql(
        "update queen.log_segments s set blob = overlay(s.blob placing '\\xff'::bytea from 4 for 1)"
            + " from queen.log_partitions p where p.id = s.partition_id and p.name = 'bad'");

    TestBroker.Reply bad = wire.popPartition("broken", "bad", "batch=5");
    assertThat(bad.status()).isEqualTo(500);
    assertThat(bad.json().get("error").asText())
        .contains("offset 0 of partition bad", "of queue broken", "seeked past it");
    assertThat(Wire.numbers(wire.popPartition("broken", "good", "batch=5").json()))
        .containsExactly(0, 1, 2, 3, 4);
  }
}
