package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

class HealthTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Test
  void healthyWhileTheDatabaseAnswersAnd503WhenItIsGone() throws Exception {
    TestBroker.Reply up = broker.get("/health");
    assertThat(up.status()).isEqualTo(200);
    JsonNode body = up.json();
    assertThat(body.get("status").asText()).isEqualTo("healthy");
    assertThat(body.get("database").asText()).isEqualTo("connected");
    assertThat(body.get("server").asText()).isEqualTo("Queen JVM");

    TestBroker.dropDatabase(broker.db().database());

    // an answer is kept for a second
    await().atMost(Duration.ofSeconds(10)).until(() -> broker.get("/health").status() == 503);
    TestBroker.Reply down = broker.get("/health");
    assertThat(down.status()).isEqualTo(503);
    assertThat(down.json().get("status").asText()).isEqualTo("unhealthy");
    assertThat(down.json().get("database").asText()).isEqualTo("disconnected");

    TestBroker.Reply push = broker.post("/api/v1/push", "{\"items\":[{\"queue\":\"q\"}]}");
    assertThat(push.status()).as("a push without a database is retryable").isEqualTo(503);
    assertThat(push.headers().firstValue("retry-after")).isPresent();
    assertThat(push.json().get("error").asText()).doesNotContain("PSQL").doesNotContain("at ");
  }
}
