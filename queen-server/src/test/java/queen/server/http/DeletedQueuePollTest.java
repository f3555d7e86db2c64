package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A long-poll on a queue deleted while its partitions were ready in the broker's ring waits out its
 * timeout quietly: the ring drops them instead of waking the poll on them again and again. A queue
 * made again after a delete is served as a new one.
 */
class DeletedQueuePollTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void aLongPollOnADeletedQueueDoesNotSpin() {
    List<com.fasterxml.jackson.databind.node.ObjectNode> items = new ArrayList<>();
    for (int p = 0; p < 5; p++) {
      items.add(Wire.item("gone", "p" + p, "gone-" + p, Wire.object()));
    }
    assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
    // a pop takes one partition and makes queue mode's ring; pushes then mark four ready in it
    assertThat(broker.get("/api/v1/pop/queue/gone?batch=1").status()).isEqualTo(200);
    for (int p = 1; p < 5; p++) {
      wire.pushNumbered("gone", "p" + p, 1, 1);
    }
    assertThat(broker.delete("/api/v1/resources/queues/gone").status()).isEqualTo(200);

    long before = broker.dbCalls();
    TestBroker.Reply r = broker.get("/api/v1/pop/queue/gone?wait=true&timeout=1500");
    long calls = broker.dbCalls() - before;
    assertThat(r.status()).isEqualTo(204);
    // about 1.5 s of the broker's own background calls (state refresh, reseeds) and a few looks;
    // spinning made thousands
    assertThat(calls).as("database calls during the poll").isLessThan(40);
  }

  // the ring still held p0 under the deleted queue's lease: a pop right after the push that made
  // the queue again answered 204 until the next reseed (helper-140)
  @Test
  void aQueueMadeAgainAfterADeleteServesAPopRightAfterItsPush() {
    wire.pushNumbered("again", "p0", 0, 1);
    wire.ackAll(broker.get("/api/v1/pop/queue/again?batch=10").json());
    wire.pushNumbered("again", "p0", 1, 2);
    assertThat(broker.get("/api/v1/pop/queue/again?batch=1").status()).as("leased").isEqualTo(200);
    assertThat(broker.delete("/api/v1/resources/queues/again").status()).isEqualTo(200);

    wire.pushNumbered("again", "p0", 10, 2);
    TestBroker.Reply popped = broker.get("/api/v1/pop/queue/again?batch=10");
    assertThat(popped.status()).isEqualTo(200);
    assertThat(Wire.numbers(popped.json())).containsExactly(10, 11);
  }
}
