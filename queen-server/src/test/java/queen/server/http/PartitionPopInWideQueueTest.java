package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * Pops of one named partition in a queue with more partitions holding work than a reseed reads
 * (1,024, at random): the ring's page may leave the named one out, and then it must not answer for
 * it. A reseed runs every 3 s per group, longer than the loops that count database calls.
 */
class PartitionPopInWideQueueTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          TestBroker.quiet(
              Map.of("POP_WAIT_INITIAL_INTERVAL_MS", "3000", "POP_WAIT_MAX_INTERVAL_MS", "3000")));

  private static final int PARTITIONS = 5_000;

  @BeforeAll
  static void fill() {
    fill("wide", 2);
    new Wire(broker).configure("wide-leases", Wire.object().put("leaseTime", 1));
    fill("wide-leases", 1);
  }

  private static void fill(String queue, int perPartition) {
    List<ObjectNode> items = new ArrayList<>();
    for (int i = 0; i < PARTITIONS; i++) {
      for (int n = 0; n < perPartition; n++) {
        items.add(Wire.item(queue, "p" + i, queue + "-" + i + "-" + n, Wire.object().put("n", n)));
      }
      if (items.size() == 1_000) {
        assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
        items.clear();
      }
    }
  }

  @Test
  void aNamedPartitionWithABacklogIsServedWhateverTheReseedPageHolds() {
    Wire wire = new Wire(broker);
    // each partition is in a random reseed page of 1,024 with odds of about one in five: ten of
    // them all found there by chance is a one-in-ten-million event
    for (int i = 0; i < 10; i++) {
      String p = "p" + i * 499;
      TestBroker.Reply r = wire.popPartition("wide", p, "wait=false&consumerGroup=now&batch=1");
      assertThat(r.status()).as("partition %s", p).isEqualTo(200);
      assertThat(Wire.numbers(r.json())).containsExactly(0);
      wire.ackAll(r.json());
      // once delivered the ring holds it, and the ack's promote makes it ready for the rest
      r = wire.popPartition("wide", p, "wait=false&consumerGroup=now&batch=1");
      assertThat(Wire.numbers(r.json())).as("partition %s", p).containsExactly(1);
      wire.ackAll(r.json());
    }
  }

  @Test
  void aLongPollOfANamedPartitionIsAnsweredAtOnce() {
    TestBroker.Reply r =
        new Wire(broker)
            .popPartition("wide", "p4321", "wait=true&timeout=20000&consumerGroup=poll");
    assertThat(r.status()).isEqualTo(200);
    assertThat(Wire.numbers(r.json())).containsExactly(0, 1);
  }

  @Test
  void aNamedPartitionWhoseLeaseExpiredIsServedAgainAfterOneReseed() {
    Wire wire = new Wire(broker);
    List<String> partitions = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      String p = "p" + (i * 499 + 7);
      partitions.add(p);
      TestBroker.Reply r = wire.popPartition("wide-leases", p, "wait=false&consumerGroup=crash");
      assertThat(Wire.numbers(r.json())).as("partition %s", p).containsExactly(0);
    }
    // never acked: each lease expires after 1 s; a draw by a reseed's page, one in five every
    // 3 s, would bring all ten back within 15 s about once in a hundred runs
    for (String p : partitions) {
      await()
          .atMost(Duration.ofSeconds(15))
          .until(
              () ->
                  wire.popPartition("wide-leases", p, "wait=false&consumerGroup=crash").status()
                      == 200);
    }
  }

  @Test
  void anEmptyNamedPartitionCostsOneClaimUntilTheNextReseed() {
    Wire wire = new Wire(broker);
    TestBroker.Reply first =
        wire.popPartition("wide", "nothing-here", "wait=false&consumerGroup=e");
    assertThat(first.status()).isEqualTo(204);
    long before = broker.dbCalls();
    for (int i = 0; i < 20; i++) {
      assertThat(wire.popPartition("wide", "nothing-here", "wait=false&consumerGroup=e").status())
          .isEqualTo(204);
    }
    // a reseed of the ring may fall in the window; a claim per pop would be 20 calls
    assertThat(broker.dbCalls() - before).as("answered by the ring").isLessThan(3);
    wire.pushNumbered("wide", "nothing-here", 0, 1);
    TestBroker.Reply r = wire.popPartition("wide", "nothing-here", "wait=false&consumerGroup=e");
    assertThat(Wire.numbers(r.json()))
        .as("a push through this broker readies it")
        .containsExactly(0);
  }
}
