package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import queen.server.Broker;
import queen.server.BrokerConfig;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.codec.Frame;
import queen.server.codec.PayloadCipher;
import queen.server.codec.PayloadKeyException;
import queen.server.codec.SegmentCodec;
import queen.server.http.ConfigureRoutes;

/**
 * Payloads of queues configured with {@code encryptionEnabled} are stored sealed (AES-256-GCM) and
 * delivered in the clear; older keys keep older payloads readable after a key rotation.
 */
class EncryptionTest {
  static final String OLD_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  static final String KEY = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
  static final String MARKER = "card-4111-1111-1111-1111";

  static final Path BUFFER = tempDir();

  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of(
              "QUEEN_ENCRYPTION_KEY",
              KEY,
              "QUEEN_ENCRYPTION_KEYS_OLD",
              OLD_KEY,
              "FILE_BUFFER_DIR",
              BUFFER.toString()));

  private static Path tempDir() {
    try {
      return Files.createTempDirectory("queen-buffer-sealed");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static ObjectNode configure(String queue) {
    ObjectNode body = Wire.object().put("queue", queue);
    body.putObject("options").put("encryptionEnabled", true).put("retryLimit", 0);
    return body;
  }

  static ObjectNode secret(String queue, String txn) {
    return Wire.items(
        List.of(Wire.item(queue, "p", txn, Wire.object().put("card", MARKER + "-" + txn))));
  }

  /**
   * Every frame stored for the queue, decoded from the raw blobs (which must not hold the marker).
   */
  private static List<Frame> storedFrames(String queue) throws Exception {
    List<Frame> frames = new ArrayList<>();
    try (Connection c = broker.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "select s.blob from queen.log_segments s join queen.log_partitions p"
                    + " on p.id = s.partition_id join queen.queues q on q.id = p.queue_id"
                    + " where q.name = '"
                    + queue
                    + "'")) {
      while (rs.next()) {
        byte[] blob = rs.getBytes(1);
        assertThat(new String(blob, StandardCharsets.ISO_8859_1)).doesNotContain("4111");
        frames.addAll(SegmentCodec.decode(blob));
      }
    }
    return frames;
  }

  @Test
  void storedPayloadsHoldNoPlaintextAndEveryRouteDeliversItInTheClear() throws Exception {
    assertThat(broker.post("/api/v1/configure", configure("vault")).status()).isEqualTo(200);
    assertThat(broker.post("/api/v1/push", secret("vault", "t1")).status()).isEqualTo(201);
    assertThat(broker.post("/api/v1/push", secret("vault", "t2")).status()).isEqualTo(201);

    List<Frame> frames = storedFrames("vault");
    assertThat(frames).hasSize(2);
    for (Frame f : frames) {
      assertThat(f.flags() & Frame.FLAG_ENCRYPTED).isEqualTo(Frame.FLAG_ENCRYPTED);
      assertThat(new String(f.payload(), StandardCharsets.ISO_8859_1)).doesNotContain("4111");
    }

    JsonNode popped = broker.get("/api/v1/pop/queue/vault/partition/p?batch=1").json();
    JsonNode m = popped.get("messages").get(0);
    assertThat(m.at("/data/card").asText()).isEqualTo(MARKER + "-t1");
    String partitionId = m.get("partitionId").asText();
    JsonNode detail = broker.get("/api/v1/messages/" + partitionId + "/t2").json();
    assertThat(detail.at("/payload/card").asText()).isEqualTo(MARKER + "-t2");
    assertThat(detail.get("isEncrypted").asBoolean()).isTrue();

    ObjectNode fail = Wire.ack(m, "failed", "declined");
    assertThat(broker.post("/api/v1/ack", fail).status()).isEqualTo(200);
    assertThat(
            broker.sqlText(
                "select encode(payload, 'escape') from queen.dead_letters where transaction_id = 't1'"))
        .as("the dead letter stays sealed")
        .doesNotContain("4111");
    JsonNode dlq = broker.get("/api/v1/dlq?queue=vault").json();
    assertThat(dlq.at("/messages/0/data/card").asText()).isEqualTo(MARKER + "-t1");
  }

  @Test
  void aPushBufferedInMaintenanceIsSealedOnTheBrokersDiskToo() throws Exception {
    assertThat(broker.post("/api/v1/configure", configure("vault-buffer")).status()).isEqualTo(200);
    broker.post("/api/v1/system/maintenance", Wire.object().put("enabled", true));
    try {
      JsonNode pushed = broker.post("/api/v1/push", secret("vault-buffer", "b1")).json();
      assertThat(pushed.get(0).get("status").asText()).isEqualTo("buffered");
      try (var files = Files.list(BUFFER)) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          assertThat(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1))
              .as("buffer file %s", f.getFileName())
              .doesNotContain("4111");
        }
      }
    } finally {
      broker.post("/api/v1/system/maintenance", Wire.object().put("enabled", false));
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> broker.get("/api/v1/status/buffers").json().get("pending").asLong() == 0);
    List<Frame> frames = storedFrames("vault-buffer");
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0).flags() & Frame.FLAG_ENCRYPTED).isEqualTo(Frame.FLAG_ENCRYPTED);
    JsonNode popped = broker.get("/api/v1/pop/queue/vault-buffer/partition/p?batch=1").json();
    assertThat(popped.at("/messages/0/data/card").asText()).isEqualTo(MARKER + "-b1");
  }

  @Test
  void aRotatedKeyKeepsOlderPayloadsReadableAndABrokerLackingAUsedKeyDoesNotStart()
      throws Exception {
    assertThat(broker.post("/api/v1/configure", configure("rotated")).status()).isEqualTo(200);
    // the broker of before the rotation sealed with the old key
    try (Broker before =
        broker.startAnother(
            Map.of("QUEEN_ENCRYPTION_KEY", OLD_KEY, "QUEEN_ENCRYPTION_KEYS_OLD", KEY))) {
      assertThat(broker.post(before, "/api/v1/push", secret("rotated", "old")).status())
          .isEqualTo(201);
    }
    assertThat(broker.post("/api/v1/push", secret("rotated", "new")).status()).isEqualTo(201);
    assertThat(storedFrames("rotated")).hasSize(2);

    JsonNode both = broker.get("/api/v1/pop/queue/rotated/partition/p?batch=10").json();
    assertThat(both.get("messages")).hasSize(2);
    assertThat(both.at("/messages/0/data/card").asText()).isEqualTo(MARKER + "-old");
    assertThat(both.at("/messages/1/data/card").asText()).isEqualTo(MARKER + "-new");

    for (var lacking : List.of(Map.of("QUEEN_ENCRYPTION_KEY", KEY), Map.<String, String>of())) {
      assertThatThrownBy(() -> broker.startAnother(lacking).close())
          .as("a broker that could not open every stored payload")
          .isInstanceOf(BrokerConfig.InvalidConfigException.class)
          .hasMessageContaining("QUEEN_ENCRYPTION_KEYS_OLD");
    }
  }

  @Test
  void aBrokerLackingAKeyAnotherBrokerStartedSealingWithRefusesEveryPopUntilRestarted()
      throws Exception {
    String newKey = "0f".repeat(32);
    int newKeyId = keyId(newKey);
    assertThat(broker.post("/api/v1/configure", configure("rotating")).status()).isEqualTo(200);
    assertThat(broker.post("/api/v1/configure", configure("rotating-first")).status())
        .isEqualTo(200);
    String autoAck = "/api/v1/pop/queue/rotating?batch=10&autoAck=true";
    // parked before this broker learns of the new key: checked at its request alone, it claimed
    // what woke it
    CompletableFuture<HttpResponse<String>> parked =
        HttpClient.newHttpClient()
            .sendAsync(
                HttpRequest.newBuilder(broker.uri(autoAck + "&wait=true&timeout=30000")).build(),
                HttpResponse.BodyHandlers.ofString());
    // a rotation that skipped its first step: the new key is current on one broker before the
    // others were given it
    try (Broker rotated =
        broker.startAnother(
            Map.of(
                "QUEEN_ENCRYPTION_KEY",
                newKey,
                "QUEEN_ENCRYPTION_KEYS_OLD",
                KEY + "," + OLD_KEY))) {
      // its key is registered by its first seal
      assertThat(broker.post(rotated, "/api/v1/push", secret("rotating-first", "f1")).status())
          .isEqualTo(201);
      // a pop by namespace claims nothing here: awaited until the state refresh tells this
      // broker of the new key
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> broker.get("/api/v1/pop?namespace=any&autoAck=true").status() == 503);
      assertThat(broker.post(rotated, "/api/v1/push", secret("rotating", "n1")).status())
          .isEqualTo(201);
      assertThat(parked.get(40, TimeUnit.SECONDS).statusCode()).isEqualTo(503);
      // an autoAck pop here moved the cursor past n1 and then could not answer it: lost
      assertThat(broker.get(autoAck).status()).isEqualTo(503);
      // a Queen client's create() switches encryption off: the queue still holds n1, sealed
      assertThat(
              broker
                  .post(
                      "/api/v1/configure",
                      Wire.object()
                          .put("queue", "rotating")
                          .set("options", Wire.object().put("encryptionEnabled", false))
                          .toString())
                  .status())
          .isEqualTo(200);
      assertThat(broker.get(autoAck).status()).isEqualTo(503);
      assertThat(broker.get("/api/v1/pop/queue/plain-beside?autoAck=true").status())
          .as("every queue: whether one holds sealed payloads is not known")
          .isEqualTo(503);
      JsonNode popped = broker.get(rotated, autoAck).json();
      assertThat(popped.at("/messages/0/data/card").asText()).isEqualTo(MARKER + "-n1");
    } finally {
      broker.sql("delete from queen.payload_keys where key_id = " + newKeyId);
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> broker.get("/api/v1/pop/queue/rotating?autoAck=true").status() == 204);
  }

  static int keyId(String hex) {
    return new PayloadCipher(HexFormat.of().parseHex(hex), List.of()).currentKeyId();
  }

  @Test
  void aDeadLetterWhosePayloadCannotBeOpenedIsNamedOnItsPageNotA503() {
    assertThat(broker.post("/api/v1/configure", configure("vault-damaged")).status())
        .isEqualTo(200);
    broker.post("/api/v1/push", secret("vault-damaged", "c1"));
    broker.post("/api/v1/push", secret("vault-damaged", "c2"));
    Wire wire = new Wire(broker);
    wire.ackAll(wire.popPartition("vault-damaged", "p", "batch=10").json(), "dlq", "bad");
    broker.sql(
        "update queen.dead_letters set payload = set_byte(payload, 30, get_byte(payload, 30) # 255)"
            + " where transaction_id = 'c1'");
    TestBroker.Reply page = broker.get("/api/v1/dlq?queue=vault-damaged");
    // before, the whole page was a 503: the other letters could not be read nor requeued
    assertThat(page.status()).isEqualTo(200);
    Map<String, JsonNode> byTxn = new java.util.HashMap<>();
    page.json().get("messages").forEach(m -> byTxn.put(m.get("transactionId").asText(), m));
    assertThat(byTxn.get("c1").get("data").isNull()).isTrue();
    assertThat(byTxn.get("c1").get("payloadError").asText()).contains("authenticate");
    assertThat(byTxn.get("c2").at("/data/card").asText()).isEqualTo(MARKER + "-c2");
  }

  @Test
  void aConfigureThatSwitchesEncryptionOffIsLoggedAsAWarning() {
    Logger routes = (Logger) LoggerFactory.getLogger(ConfigureRoutes.class);
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    routes.addAppender(logged);
    try {
      assertThat(broker.post("/api/v1/configure", configure("switched")).status()).isEqualTo(200);
      // what Queen's JS create() sends by default: a full replace with encryptionEnabled false
      ObjectNode plain = Wire.object().put("queue", "switched");
      plain.putObject("options").put("encryptionEnabled", false);
      assertThat(broker.post("/api/v1/configure", plain).status()).isEqualTo(200);
    } finally {
      routes.detachAppender(logged);
    }
    assertThat(logged.list)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getLevel()).isEqualTo(Level.WARN);
              assertThat(e.getFormattedMessage()).contains("switched", "in the clear");
            });
  }

  @Test
  void malformedKeysStopTheBrokerNamingTheVariable() {
    for (var bad :
        List.of(
            Map.of("QUEEN_ENCRYPTION_KEY", "abc"),
            Map.of("QUEEN_ENCRYPTION_KEY", "z".repeat(64)),
            Map.of("QUEEN_ENCRYPTION_KEY", KEY, "QUEEN_ENCRYPTION_KEYS_OLD", OLD_KEY + ",12"))) {
      String variable =
          bad.containsKey("QUEEN_ENCRYPTION_KEYS_OLD")
              ? "QUEEN_ENCRYPTION_KEYS_OLD"
              : "QUEEN_ENCRYPTION_KEY";
      assertThatThrownBy(() -> BrokerConfig.fromEnv(bad))
          .isInstanceOf(BrokerConfig.InvalidConfigException.class)
          .hasMessageStartingWith(variable);
    }
  }

  @Test
  void everySealUsesAFreshNonceAndATamperedPayloadDoesNotOpen() {
    PayloadCipher cipher = new PayloadCipher(HexFormat.of().parseHex(KEY), List.of());
    byte[] plain = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
    byte[] one = cipher.seal(plain);
    byte[] two = cipher.seal(plain);
    assertThat(one).isNotEqualTo(two);
    assertThat(cipher.open(one)).isEqualTo(plain);
    one[one.length - 1] ^= 1;
    assertThatThrownBy(() -> cipher.open(one)).isInstanceOf(PayloadKeyException.class);
    PayloadCipher other = new PayloadCipher(HexFormat.of().parseHex(OLD_KEY), List.of());
    assertThatThrownBy(() -> other.open(two))
        .isInstanceOf(PayloadKeyException.class)
        .hasMessageContaining("QUEEN_ENCRYPTION_KEYS_OLD");
  }
}
