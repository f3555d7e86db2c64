package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.BrokerConfig;
import queen.server.TestBroker;

/**
 * A long-poll waits at most QUEEN_POP_MAX_TIMEOUT_MS whatever its timeout asks: a client that
 * vanished without closing its connection would otherwise hold its pop for up to 24 days.
 */
class LongPollCapTest {
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_POP_MAX_TIMEOUT_MS", "1000"));

  @Test
  void aLongPollAskingForAnHourIsAnswered204AtTheCap() throws Exception {
    CompletableFuture<TestBroker.Reply> poll =
        CompletableFuture.supplyAsync(
            () -> broker.get("/api/v1/pop/queue/capped?wait=true&timeout=3600000"));
    // the hour is never waited for: the answer comes at the broker's cap of one second
    assertThat(poll.get(20, TimeUnit.SECONDS).status()).isEqualTo(204);
  }

  @Test
  void aCapBelowASecondIsRefusedNamingTheSetting() {
    assertThatThrownBy(() -> BrokerConfig.fromEnv(Map.of("QUEEN_POP_MAX_TIMEOUT_MS", "10")))
        .isInstanceOf(BrokerConfig.InvalidConfigException.class)
        .hasMessageContaining("QUEEN_POP_MAX_TIMEOUT_MS");
  }
}
