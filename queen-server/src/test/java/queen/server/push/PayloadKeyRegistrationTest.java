package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.Broker;
import queen.server.BrokerConfig;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A payload key is registered in queen.payload_keys by its first seal, not at start: the brokers
 * lacking a registered key refuse every pop, so a key that sealed nothing must not be registered.
 */
class PayloadKeyRegistrationTest {
  static final String KEY = EncryptionTest.KEY;
  static final String OLD_KEY = EncryptionTest.OLD_KEY;

  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("QUEEN_ENCRYPTION_KEY", KEY, "QUEEN_ENCRYPTION_KEYS_OLD", OLD_KEY));

  @Test
  void aKeyIsRegisteredByItsFirstSealSoABrokerGivenOneThatSealsNothingStopsNoPops()
      throws Exception {
    assertThat(
            broker.post("/api/v1/configure", EncryptionTest.configure("vault-registered")).status())
        .isEqualTo(200);
    assertThat(
            broker.post("/api/v1/push", EncryptionTest.secret("vault-registered", "r1")).status())
        .isEqualTo(201);
    assertThat(registered(KEY)).isTrue();

    // a restart with a mistyped key: refused, for the stored payloads it could not open
    String mistyped = "1e".repeat(32);
    assertThatThrownBy(() -> broker.startAnother(Map.of("QUEEN_ENCRYPTION_KEY", mistyped)).close())
        .isInstanceOf(BrokerConfig.InvalidConfigException.class);
    // before, it registered its key first: every broker lacking it refused every pop, and every
    // later start failed for it too, until the row was deleted by hand
    assertThat(registered(mistyped)).isFalse();

    // the first broker of a rollout given a new key, pushing to queues that do not encrypt
    String rolled = "2d".repeat(32);
    try (Broker first =
        broker.startAnother(
            Map.of(
                "QUEEN_ENCRYPTION_KEY",
                rolled,
                "QUEEN_ENCRYPTION_KEYS_OLD",
                KEY + "," + OLD_KEY))) {
      ObjectNode plain =
          Wire.items(List.of(Wire.item("plain-rollout", "p", "x1", Wire.object().put("n", 1))));
      assertThat(broker.post(first, "/api/v1/push", plain).status()).isEqualTo(201);
      assertThat(registered(rolled)).isFalse();
      // configured through it: it knows at once that the queue encrypts
      assertThat(
              broker
                  .post(first, "/api/v1/configure", EncryptionTest.configure("vault-rolled"))
                  .status())
          .isEqualTo(200);
      try {
        assertThat(
                broker
                    .post(first, "/api/v1/push", EncryptionTest.secret("vault-rolled", "r2"))
                    .status())
            .isEqualTo(201);
        assertThat(registered(rolled)).as("registered before its first seal").isTrue();
      } finally {
        // nothing sealed with the rolled key stays behind its row
        broker.send("DELETE", "/api/v1/resources/queues/vault-rolled", null);
        broker.sql("delete from queen.payload_keys where key_id = " + EncryptionTest.keyId(rolled));
      }
    }
    // this broker lacked the rolled key while it was registered: it pops again once it reads it
    // gone
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> broker.get("/api/v1/pop/queue/plain-rollout?autoAck=true").status() != 503);

    // a row deleted by hand while its key still seals: registered again by the next seal
    broker.sql("delete from queen.payload_keys where key_id = " + EncryptionTest.keyId(KEY));
    AtomicInteger pushes = new AtomicInteger();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              String txn = "r3-" + pushes.incrementAndGet();
              assertThat(
                      broker
                          .post("/api/v1/push", EncryptionTest.secret("vault-registered", txn))
                          .status())
                  .isEqualTo(201);
              return registered(KEY);
            });
  }

  private static boolean registered(String hex) {
    return broker.sqlLong(
            "select count(*) from queen.payload_keys where key_id = " + EncryptionTest.keyId(hex))
        == 1;
  }
}
