package queen.server.http.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;

/**
 * With authentication on, only an admin switches a queue's payload encryption off: a read-write
 * token's configure (any consumer's create(), which sends encryptionEnabled false) keeps it on.
 */
class EncryptionSwitchTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Tokens.brokerEnv(
              "QUEEN_ENCRYPTION_KEY",
              "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
              // what another broker configures is learned late here, as without hints
              "QUEEN_HINTS",
              "false",
              "QUEEN_STATE_REFRESH_MS",
              "3600000"));

  private static final String ADMIN = Tokens.hs256("ops", "admin");
  private static final String WRITER = Tokens.hs256("svc", "read-write");

  private static JsonNode configure(String token, String options) {
    return configure(token, "sealed", options);
  }

  private static JsonNode configure(String token, String queue, String options) {
    TestBroker.Reply r =
        broker.send(
            "POST",
            "/api/v1/configure",
            "{\"queue\":\"" + queue + "\",\"options\":" + options + "}",
            "Authorization",
            "Bearer " + token);
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    return r.json().get("options");
  }

  /** Pushes one message and says whether it was stored sealed. */
  private static boolean pushedSealed(String txn) {
    TestBroker.Reply pushed =
        broker.send(
            "POST",
            "/api/v1/push",
            "{\"items\":[{\"queue\":\"sealed\",\"transactionId\":\"" + txn + "\",\"payload\":{}}]}",
            "Authorization",
            "Bearer " + WRITER);
    assertThat(pushed.status()).as(pushed.text()).isEqualTo(201);
    String partition = pushed.json().get(0).get("partition_id").asText();
    TestBroker.Reply detail =
        broker.send(
            "GET",
            "/api/v1/messages/" + partition + "/" + txn,
            null,
            "Authorization",
            "Bearer " + WRITER);
    return detail.json().get("isEncrypted").asBoolean();
  }

  @Test
  void aReadWriteConfigureKeepsEncryptionOnAndAnAdminsSwitchesItOff() {
    assertThat(
            configure(ADMIN, "{\"encryptionEnabled\":true}").get("encryptionEnabled").asBoolean())
        .isTrue();
    JsonNode kept = configure(WRITER, "{\"encryptionEnabled\":false,\"leaseTime\":30}");
    assertThat(kept.get("encryptionEnabled").asBoolean()).isTrue();
    assertThat(kept.get("leaseTime").asInt()).as("the rest applies").isEqualTo(30);
    assertThat(configure(WRITER, "{}").get("encryptionEnabled").asBoolean()).isTrue();
    assertThat(pushedSealed("after-writer")).isTrue();
    assertThat(configure(ADMIN, "{}").get("encryptionEnabled").asBoolean()).isFalse();
    assertThat(pushedSealed("after-admin")).isFalse();
  }

  @Test
  void encryptionSwitchedOnThroughAnotherBrokerIsKeptThoughThisOneHasNotLearnedItYet() {
    configure(WRITER, "sealed-elsewhere", "{}");
    // another broker's configure, which this broker will learn of only at its next state refresh
    broker.sql("update queen.queues set encryption_enabled = true where name = 'sealed-elsewhere'");
    JsonNode kept = configure(WRITER, "sealed-elsewhere", "{\"encryptionEnabled\":false}");
    assertThat(kept.get("encryptionEnabled").asBoolean()).isTrue();
    assertThat(
            broker.sqlText(
                "select encryption_enabled::text from queen.queues where name = 'sealed-elsewhere'"))
        .isEqualTo("true");
  }
}
