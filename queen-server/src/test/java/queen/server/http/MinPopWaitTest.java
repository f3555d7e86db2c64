package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

class MinPopWaitTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void batchesAreFullerWithAMinimumPopWaitThanWithout() throws Exception {
    wire.configure("trickle-off", Wire.object());
    wire.configure("trickle-on", Wire.object().put("minPopWaitTime", 500));
    double off = averageBatch("trickle-off");
    double on = averageBatch("trickle-on");
    System.out.printf("min pop wait: %.1f messages per pop off, %.1f on%n", off, on);
    assertThat(on).isGreaterThan(off * 2);
  }

  /**
   * A producer pushes 10 messages every 50 ms for 2 s while a consumer long-polls batches of 100;
   * the average batch the consumer got.
   */
  private double averageBatch(String queue) throws Exception {
    AtomicInteger pushed = new AtomicInteger();
    ScheduledExecutorService producer = Executors.newSingleThreadScheduledExecutor();
    producer.scheduleAtFixedRate(
        () -> {
          int from = pushed.getAndAdd(10);
          if (from < 400) {
            wire.pushNumbered(queue, "p", from, 10);
          }
        },
        0,
        50,
        TimeUnit.MILLISECONDS);
    List<Integer> batches = new ArrayList<>();
    int received = 0;
    try {
      while (received < 400) {
        TestBroker.Reply r =
            broker.get(
                "/api/v1/pop/queue/" + queue + "?batch=100&autoAck=true&wait=true&timeout=5000");
        assertThat(r.status()).isEqualTo(200);
        JsonNode body = r.json();
        batches.add(body.get("messages").size());
        received += body.get("messages").size();
      }
    } finally {
      producer.shutdownNow();
    }
    return batches.stream().mapToInt(Integer::intValue).average().orElse(0);
  }
}
