package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.TcpProxy;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A long-poll that meets the database gone waits it out as it waits for messages, and answers 204
 * at its deadline, not 503: Queen's JS and Python consume() loops end on a 5xx that outlasts their
 * three tries, where old Queen answered such a pop 200 with no messages. A pop that does not wait
 * still answers 503.
 */
class OutageLongPollTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static int push(Broker via, String txn) {
    return broker
        .post(
            via,
            "/api/v1/push",
            Wire.items(List.of(Wire.item("outage", "p", txn, Wire.object().put("txn", txn)))))
        .status();
  }

  @Test
  void aLongPollWaitsOutAnOutageAndDeliversOnceTheDatabaseIsBack() throws Exception {
    try (TcpProxy proxy = new TcpProxy(broker.db().port());
        Broker b =
            broker.startAnother(
                Map.of("PG_HOST", "127.0.0.1", "PG_PORT", Integer.toString(proxy.port())))) {
      // in the ring of b: a pop's look goes to the database for it
      assertThat(push(b, "before")).isEqualTo(201);
      proxy.cut();

      TestBroker.Reply now = broker.get(b, "/api/v1/pop/queue/outage?wait=false&autoAck=true");
      assertThat(now.status()).as(now.text()).isEqualTo(503);
      assertThat(now.text()).contains("Database unavailable");

      TestBroker.Reply shortWait =
          broker.get(b, "/api/v1/pop/queue/outage?wait=true&timeout=1000&autoAck=true");
      assertThat(shortWait.status()).as(shortWait.text()).isEqualTo(204);

      double before = broker.metric(b, "queen_pop_failed_looks_total", "");
      CompletableFuture<TestBroker.Reply> parked =
          CompletableFuture.supplyAsync(
              () -> broker.get(b, "/api/v1/pop/queue/outage?wait=true&timeout=60000&autoAck=true"));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> broker.metric(b, "queen_pop_failed_looks_total", "") > before);
      assertThat(parked).as("still waiting while the database is away").isNotDone();
      proxy.restore();

      TestBroker.Reply delivered = parked.get(60, TimeUnit.SECONDS);
      assertThat(delivered.status()).as(delivered.text()).isEqualTo(200);
      assertThat(delivered.json().get("messages"))
          .extracting(m -> m.get("transactionId").asText())
          .containsExactly("before");
    }
  }
}
