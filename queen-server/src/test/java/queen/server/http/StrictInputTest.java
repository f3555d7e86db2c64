package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The same name rules on every route, unparsable query parameters refused instead of defaulted, and
 * the push limits: each a 4xx naming the field, with nothing stored.
 */
class StrictInputTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(Map.of("QUEEN_MAX_PUSH_ITEMS", "5", "QUEEN_MAX_PAYLOAD_BYTES", "100"));

  private static final List<String> BAD_NAMES =
      List.of("", "   ", "x".repeat(256), "a\u0001b", "tab\there");

  private static ObjectNode push(String queue, String partition) {
    ObjectNode item = Wire.object().put("queue", queue).put("partition", partition);
    item.putObject("payload").put("n", 1);
    return Wire.items(List.of(item));
  }

  private static void refused(TestBroker.Reply r, int status, String names, String what) {
    assertThat(r.status()).as(what).isEqualTo(status);
    assertThat(r.json().get("error").asText()).as(what).contains(names);
  }

  @Test
  void badQueueAndPartitionNamesAreRefusedOnEveryRoute() {
    for (String bad : BAD_NAMES) {
      String what = "'" + bad.replace("\u0001", "\\u0001") + "'";
      refused(broker.post("/api/v1/push", push(bad, "p")), 400, "queue", "push queue " + what);
      refused(broker.post("/api/v1/push", push("q", bad)), 400, "partition", "partition " + what);
      refused(
          broker.post("/api/v1/configure", Wire.object().put("queue", bad)),
          400,
          "queue",
          "configure " + what);
      ObjectNode txn = Wire.object();
      txn.putArray("operations")
          .addObject()
          .put("type", "push")
          .set("items", push(bad, "p").get("items"));
      refused(broker.post("/api/v1/transaction", txn), 400, "queue", "transaction " + what);
    }
    String encoded = "%20%20";
    refused(broker.get("/api/v1/pop/queue/" + encoded), 400, "queue", "pop");
    refused(broker.get("/api/v1/pop/queue/q/partition/" + encoded), 400, "partition", "pop");
    refused(broker.get("/api/v1/pop/queue/q?consumerGroup=a%01b"), 400, "consumerGroup", "pop");
    refused(broker.get("/api/v1/resources/queues/" + "x".repeat(256)), 400, "queue", "resources");
    refused(broker.delete("/api/v1/consumer-groups/g/queues/%09"), 400, "queue", "group delete");
    assertThat(
            broker.sqlText(
                "select string_agg(name, ',') from queen.queues where name not in ('lim', 'slashed', 'q-slash', 'long-ids', 'labelled', 'blank-param', 'dead-dated', 'emoji')"
                    + " and name not like 'lone-%'"))
        .as("no queue but those the other tests push to")
        .isNull();
  }

  @Test
  void unparsableNumbersAndBooleansInQueryStringsAreRefusedByName() {
    refused(broker.get("/api/v1/pop/queue/q?timeout=abc&wait=true"), 400, "timeout", "timeout");
    refused(broker.get("/api/v1/pop/queue/q?batch=abc"), 400, "batch", "batch");
    refused(broker.get("/api/v1/pop/queue/q?batch=99999999999"), 400, "batch", "overflow");
    refused(broker.get("/api/v1/pop/queue/q?wait=maybe"), 400, "wait", "wait");
    refused(broker.get("/api/v1/pop/queue/q?autoAck=yes"), 400, "autoAck", "autoAck");
    refused(broker.get("/api/v1/dlq?limit=ten"), 400, "limit", "dlq limit");
    refused(broker.get("/api/v1/messages?from=yesterday"), 400, "from", "messages from");
    refused(
        broker.get("/api/v1/pop/queue/q?subscriptionFrom=%2B999999999-12-31T23:59:59-18:00"),
        400,
        "subscriptionFrom",
        "an instant past the last year");
    assertThat(broker.get("/api/v1/pop/queue/q?batch=&wait=false&autoAck=TRUE").status())
        .as("empty takes the default, booleans in any case")
        .isEqualTo(204);
  }

  @Test
  void pushesOverTheLimitsAreRefusedWholeNamingTheLimit() {
    ObjectNode many = Wire.object();
    var items = many.putArray("items");
    for (int i = 0; i < 6; i++) {
      items.addObject().put("queue", "lim").putObject("payload").put("n", i);
    }
    refused(broker.post("/api/v1/push", many), 413, "QUEEN_MAX_PUSH_ITEMS", "items");
    ObjectNode big = Wire.object();
    big.putArray("items")
        .addObject()
        .put("queue", "lim")
        .putObject("payload")
        .put("text", "y".repeat(200));
    refused(broker.post("/api/v1/push", big), 413, "QUEEN_MAX_PAYLOAD_BYTES", "payload");
    assertThat(broker.sqlLong("select count(*) from queen.queues where name = 'lim'")).isZero();
    JsonNode five =
        broker
            .post(
                "/api/v1/push",
                Wire.items(
                    List.of(
                        Wire.item("lim", "p", "a", Wire.object()),
                        Wire.item("lim", "p", "b", Wire.object()),
                        Wire.item("lim", "p", "c", Wire.object()),
                        Wire.item("lim", "p", "d", Wire.object()),
                        Wire.item("lim", "p", "e", Wire.object()))))
            .json();
    assertThat(five).as("at the limit").hasSize(5);
  }

  @Test
  void aTransactionIsBoundByTheItemLimitInOperationsAndInItemsAcrossThem() {
    String op = "{\"type\":\"push\",\"items\":[%s]}";
    String item = "{\"queue\":\"lim-tx\",\"payload\":{}}";
    String six = String.join(",", java.util.Collections.nCopies(6, op.formatted("")));
    refused(
        broker.post("/api/v1/transaction", "{\"operations\":[" + six + "]}"),
        413,
        "QUEEN_MAX_PUSH_ITEMS",
        "operations");
    String three = op.formatted(item + "," + item + "," + item);
    refused(
        broker.post("/api/v1/transaction", "{\"operations\":[" + three + "," + three + "]}"),
        413,
        "QUEEN_MAX_PUSH_ITEMS",
        "items across operations");
    assertThat(broker.sqlLong("select count(*) from queen.queues where name = 'lim-tx'")).isZero();
  }

  @Test
  void aBodyReadWholeIsBoundByItsJsonTokens() {
    // 500,001 empty objects: 1.5 MB of body, a tree of some 50 MB
    String acks = "{},".repeat(500_000) + "{}";
    refused(
        broker.post("/api/v1/ack/batch", "{\"acknowledgments\":[" + acks + "]}"),
        413,
        "JSON tokens",
        "ack batch");
  }

  @Test
  void aBlankConsumerGroupOrPartitionParameterIsRefusedNotTakenAsAbsent() {
    broker.post("/api/v1/push", push("blank-param", "p"));
    broker.post("/api/v1/push", push("blank-param", "other"));
    // popped and auto-acked queue mode's message, and cleared every partition of the queue
    refused(
        broker.get("/api/v1/pop/queue/blank-param?autoAck=true&consumerGroup=%20%20"),
        400,
        "consumerGroup",
        "pop");
    refused(broker.delete("/api/v1/queues/blank-param/clear?partition=%20"), 400, "partition", "");
    refused(broker.delete("/api/v1/queues/blank-param/clear?partition=%01"), 400, "partition", "");
    TestBroker.Reply both =
        broker.get("/api/v1/pop/queue/blank-param?consumerGroup=&batch=10&partitions=2");
    assertThat(both.status()).as("an empty value is absent: queue mode").isEqualTo(200);
    assertThat(both.json().get("messages")).as("both messages still there").hasSize(2);
  }

  @Test
  void aBodyInUtf16IsRefusedAsNotUtf8() throws Exception {
    byte[] utf16 = push("utf16", "p").toString().getBytes(StandardCharsets.UTF_16LE);
    for (String route : List.of("/api/v1/push", "/api/v1/transaction")) {
      TestBroker.Reply r =
          broker.send(
              java.net.http.HttpRequest.newBuilder(broker.uri(route))
                  .header("Content-Type", "application/json")
                  .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(utf16))
                  .build());
      refused(r, 400, "UTF-8", route);
    }
  }

  @Test
  void numbersOfMoreThanTenThousandDigitsWrittenOutAreRefusedInTraceData() {
    // 8 bytes here, 131,072 digits at every read of the trace and of its message's detail
    String trace =
        "{\"transactionId\":\"t\",\"partitionId\":\"00000000-0000-0000-0000-000000000000\","
            + "\"data\":{\"n\":[%s]}}";
    for (String over : List.of("1e131071", "1e5000, 1e4999", "1e-5000, 1e4999")) {
      refused(
          broker.post("/api/v1/traces", trace.formatted(over)),
          400,
          "data holds numbers of more than 10000 digits written out",
          over);
    }
    // its digits before the point overflowed an int, and PostgreSQL's refusal was a 500
    refused(
        broker.post("/api/v1/traces", trace.formatted("1e2147483647")),
        400,
        "beyond what PostgreSQL can store",
        "1e2147483647");
    assertThat(broker.post("/api/v1/traces", trace.formatted("1e4999, 1e4999")).status())
        .as("past the check, the message is unknown")
        .isEqualTo(404);
  }

  @Test
  void aDateAsQueensJsClientSendsItFiltersDeadLetters() {
    Wire wire = new Wire(broker);
    wire.configure("dead-dated", Wire.object().put("retryLimit", 0));
    wire.pushNumbered("dead-dated", "Default", 0, 1);
    wire.ackAll(wire.popPartition("dead-dated", "Default", "batch=10").json(), "failed", "once");
    // String(date) in Chicago, and date.toUTCString(): both long before the dead letter
    String jsText = "Sat May 02 2026 08:42:27 GMT-0500 (Central Daylight Time)";
    String utc = "Sat, 02 May 2026 13:42:27 GMT";
    String future = "Fri, 01 Jan 2100 00:00:00 GMT";
    for (String before : List.of(jsText, utc)) {
      assertThat(deadLetters("from", before)).as(before).isEqualTo(1);
      assertThat(deadLetters("to", before)).as(before).isZero();
    }
    assertThat(deadLetters("from", future)).isZero();
    assertThat(deadLetters("to", future)).isEqualTo(1);
    refused(
        broker.get("/api/v1/dlq?from=Sun%20May%2002%202026%2008:42:27%20GMT-0500"),
        400,
        "from",
        "a wrong day");
  }

  private static int deadLetters(String bound, String date) {
    String encoded = URLEncoder.encode(date, StandardCharsets.UTF_8).replace("+", "%20");
    TestBroker.Reply r = broker.get("/api/v1/dlq?queue=dead-dated&" + bound + "=" + encoded);
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    return r.json().get("total").asInt();
  }

  @Test
  void namesAndTransactionIdsWithAnUnpairedSurrogateAreRefused() {
    // stored as '?': the queue read back was another (a 500), a retried transactionId a new one
    String queue = "{\"items\":[{\"queue\":\"q\\ud800\",\"payload\":{}}]}";
    refused(broker.post("/api/v1/push", queue), 400, "unpaired surrogates", "queue");
    String txn = "{\"items\":[{\"queue\":\"lone\",\"transactionId\":\"t\\udc00\",\"payload\":{}}]}";
    refused(broker.post("/api/v1/push", txn), 400, "unpaired surrogates", "transactionId");
    // free text is stored with '?': an ack whose error was cut mid-emoji must not be a 4xx
    String ack =
        "{\"transactionId\":\"t\",\"partitionId\":\"00000000-0000-0000-0000-000000000001\","
            + "\"status\":\"failed\",\"error\":\"cut \\ud83d\"}";
    assertThat(broker.post("/api/v1/ack", ack).status()).isEqualTo(200);
    // stored as '?', a namespace no discovery pop could name, a trace name found as "?"
    refused(
        broker.post("/api/v1/configure", "{\"queue\":\"lone-ns\",\"namespace\":\"n\\ud800\"}"),
        400,
        "namespace",
        "namespace");
    refused(
        broker.post(
            "/api/v1/traces",
            "{\"transactionId\":\"t\",\"partitionId\":\"00000000-0000-0000-0000-000000000000\","
                + "\"traceNames\":[\"\\ud800\"],\"data\":{}}"),
        400,
        "traceNames",
        "trace name");
    refused(
        broker.post(
            "/api/v1/traces",
            "{\"transactionId\":\"t\",\"partitionId\":\"00000000-0000-0000-0000-000000000000\","
                + "\"eventType\":\"\\udc00\",\"data\":{}}"),
        400,
        "eventType",
        "event type");
    String paired = "{\"items\":[{\"queue\":\"lone-\\ud83d\\ude00\",\"payload\":{}}]}";
    assertThat(broker.post("/api/v1/push", paired).status())
        .as("a pair is a character")
        .isEqualTo(201);
  }

  @Test
  void namesThatWouldReachAnotherRouteAreRefused() {
    for (String dots : List.of(".", "..")) {
      refused(broker.post("/api/v1/push", push(dots, "p")), 400, "queue", "queue " + dots);
      // nor could a message so named be looked at or requeued, nor a trace so named read
      refused(
          broker.post(
              "/api/v1/push", Wire.items(List.of(Wire.item("q-dots", "p", dots, Wire.object())))),
          400,
          "transactionId",
          "transactionId " + dots);
      refused(
          broker.post(
              "/api/v1/traces",
              Wire.object()
                  .put("transactionId", "t")
                  .put("partitionId", "00000000-0000-0000-0000-000000000000")
                  .put("traceNames", dots)
                  .set("data", Wire.object())),
          400,
          "traceNames",
          "trace name " + dots);
      refused(broker.get("/api/v1/pop/queue/q?consumerGroup=" + dots), 400, "consumerGroup", dots);
    }
    // Queen's clients put a queue's name in a path as it is: "tenant/orders" reaches no route
    refused(broker.post("/api/v1/push", push("tenant/orders", "p")), 400, "queue", "queue /");
    refused(
        broker.post("/api/v1/configure", Wire.object().put("queue", "tenant/orders")),
        400,
        "queue",
        "configure /");
    // nor any other character that changes a path: "orders;v2" popped the queue "orders"
    for (String changer : List.of("orders;v2", "orders?v2", "orders#2", "50%41", "a\\b")) {
      refused(broker.post("/api/v1/push", push(changer, "p")), 400, "queue", "queue " + changer);
      refused(
          broker.post("/api/v1/configure", Wire.object().put("queue", changer)),
          400,
          "queue",
          "configure " + changer);
    }
    // partitions and groups keep it: queue-mode pops and the query string reach them
    assertThat(broker.post("/api/v1/push", push("q-slash", "user/42")).status()).isEqualTo(201);
    assertThat(broker.get("/api/v1/pop/queue/q-slash?consumerGroup=team%2Fbilling").status())
        .isEqualTo(200);
    broker.post("/api/v1/push", push("slashed", "p"));
    assertThat(broker.get("/api/v1/pop/queue/slashed?consumerGroup=billing").status())
        .isEqualTo(200);
    // nor a partition named "..", resolved away to the seek of every partition of the queue
    broker.post("/api/v1/push", push("slashed", "q"));
    refused(
        broker.post(
            "/api/v1/consumer-groups/billing/queues/slashed/partitions/../seek",
            Wire.object().put("toEnd", true)),
        400,
        "'..'",
        "..");
    refused(broker.delete("/api/v1/consumer-groups/billing/queues/./"), 400, "'.'", ".");
    assertThat(
            broker
                .post(
                    "/api/v1/consumer-groups/billing/queues/slashed/partitions/%2E%2E/seek",
                    Wire.object().put("toEnd", true))
                .status())
        .as("encoded, the segment is refused as well")
        .isEqualTo(400);
    assertThat(broker.get("/api/v1/pop/queue/slashed?consumerGroup=billing").status())
        .as("q's message still there for billing: no seek to the end ran")
        .isEqualTo(200);
  }

  // longer, a push was stored that no ack could dead-letter (a 500 from the index, and every
  // maxWait sweep after it)
  @Test
  void aTransactionIdOverTheIndexLimitIsRefusedWherePushed() {
    String longId = "t".repeat(513);
    ObjectNode body = push("long-ids", "p");
    ((ObjectNode) body.get("items").get(0)).put("transactionId", longId);
    refused(broker.post("/api/v1/push", body), 400, "at most 512 characters", "push");
    ((ObjectNode) body.get("items").get(0)).put("transactionId", "t".repeat(512));
    assertThat(broker.post("/api/v1/push", body).status()).as("512 is taken").isEqualTo(201);
  }

  // counted in UTF-16 units, 255 emoji were 510 and refused (helper-141)
  @Test
  void aNameOf255EmojiIsTakenAnd256AreRefused() {
    String emoji = "\uD83D\uDE00";
    ObjectNode body = push("emoji", emoji.repeat(255));
    assertThat(broker.post("/api/v1/push", body).status()).isEqualTo(201);
    String encoded = URLEncoder.encode(emoji.repeat(255), StandardCharsets.UTF_8);
    assertThat(new Wire(broker).popPartition("emoji", encoded, "batch=1").status()).isEqualTo(200);
    refused(
        broker.post("/api/v1/push", push("emoji", emoji.repeat(256))),
        400,
        "at most 255 characters, got 256",
        "push");
  }

  // longer, random text failed the size limit of the index that finds queues by them: a 500
  @Test
  void aNamespaceOrTaskOverTheNameLimitIsRefused() {
    for (String field : List.of("namespace", "task")) {
      ObjectNode body = Wire.object().put("queue", "labelled").put(field, "n".repeat(256));
      refused(broker.post("/api/v1/configure", body), 400, field, field);
      body.put(field, "n".repeat(255));
      assertThat(broker.post("/api/v1/configure", body).status()).as(field).isEqualTo(200);
    }
  }
}
