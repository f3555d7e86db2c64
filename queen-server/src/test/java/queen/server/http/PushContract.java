package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static queen.server.Wire.item;
import static queen.server.Wire.items;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import queen.server.TestBroker;
import queen.server.Wire;

abstract class PushContract {
  /** The broker under test: plain PostgreSQL or Citus, by subclass. */
  abstract TestBroker broker();

  private final Wire wire = new Wire(broker());

  @Test
  void answersOneResultPerItemInInputOrder() {
    TestBroker.Reply r =
        broker()
            .post(
                "/api/v1/push",
                items(
                    List.of(
                        item("shape", "a", "t1", object().put("x", 1)),
                        item("shape", "b", "t2", object().put("x", 2)),
                        item("shape", "a", "t3", object().put("x", 3)))));
    assertThat(r.status()).isEqualTo(201);
    assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
    JsonNode results = r.json();
    assertThat(results).hasSize(3);
    for (int i = 0; i < 3; i++) {
      JsonNode res = results.get(i);
      assertThat(res.get("index").asInt()).isEqualTo(i);
      assertThat(res.get("status").asText()).isEqualTo("queued");
      assertThat(res.get("transaction_id").asText()).isEqualTo("t" + (i + 1));
      assertThat(res.get("message_id").asText()).matches("[0-9a-f-]{36}");
      assertThat(res.get("partition_id").asText()).matches("[0-9a-f-]{36}");
      assertThat(res.get("queueName").asText()).isEqualTo("shape");
      assertThat(res.get("trace_id").isNull()).isTrue();
    }
    assertThat(results.get(0).get("partition_id")).isEqualTo(results.get(2).get("partition_id"));
    assertThat(results.get(0).get("partition_id")).isNotEqualTo(results.get(1).get("partition_id"));
    assertThat(
            broker()
                .sqlLong(
                    "select count(*) from queen.log_segments s join queen.log_partitions p"
                        + " on p.id = s.partition_id join queen.queues q on q.id = p.queue_id"
                        + " where q.name = 'shape'"))
        .as("one segment per (push, partition)")
        .isEqualTo(2);
  }

  @Test
  void onePushToOnePartitionIsOneSegmentWithConsecutiveOffsets() {
    wire.pushNumbered("segments", "p", 0, 50);
    wire.pushNumbered("segments", "p", 50, 30);
    String pid =
        "(select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id"
            + " where q.name = 'segments' and p.name = 'p')";
    assertThat(
            broker().sqlLong("select count(*) from queen.log_segments where partition_id = " + pid))
        .isEqualTo(2);
    assertThat(
            broker()
                .sqlLong(
                    "select max(base_offset + msg_count - 1) from queen.log_segments"
                        + " where partition_id = "
                        + pid))
        .isEqualTo(79);
    assertThat(broker().sqlLong("select last_offset from queen.log_partitions where id = " + pid))
        .isEqualTo(79);
    assertThat(
            broker()
                .sqlLong(
                    "select sum(cardinality(entries) / 2) from queen.log_txn_index"
                        + " where partition_id = "
                        + pid))
        .as("one transactionId index entry per message")
        .isEqualTo(80);
  }

  @Test
  void createsQueuesAndPartitionsWithNamespaceAndTaskFromADottedName() {
    wire.pushNumbered("billing.invoices.v2", "Default", 0, 1);
    assertThat(
            broker()
                .sqlLong(
                    "select count(*) from queen.queues where name = 'billing.invoices.v2'"
                        + " and namespace = 'billing' and task = 'invoices'"))
        .isEqualTo(1);
  }

  @Test
  void duplicatesWithinOneBatchReportTheFirstItemsMessageId() {
    JsonNode r =
        broker()
            .post(
                "/api/v1/push",
                items(
                    List.of(
                        item("dups", "Default", "same", object().put("v", 1)),
                        item("dups", "Default", "other", object().put("v", 2)),
                        item("dups", "Default", "same", object().put("v", 3)))))
            .json();
    assertThat(r.get(0).get("status").asText()).isEqualTo("queued");
    assertThat(r.get(1).get("status").asText()).isEqualTo("queued");
    assertThat(r.get(2).get("status").asText()).isEqualTo("duplicate");
    assertThat(r.get(2).get("message_id")).isEqualTo(r.get(0).get("message_id"));
    assertThat(broker().sqlLong(countInPartition("dups"))).isEqualTo(2);
  }

  @Test
  void duplicatesAcrossBatchesWriteNothingAndReportTheStoredMessage() {
    JsonNode first =
        broker().post("/api/v1/push", items(List.of(item("again", "p", "k1", object())))).json();
    TestBroker.Reply second =
        broker()
            .post(
                "/api/v1/push",
                items(
                    List.of(
                        item("again", "p", "k1", object().put("changed", true)),
                        item("again", "p", "k2", object()))));
    assertThat(second.status()).isEqualTo(201);
    assertThat(second.json().get(0).get("status").asText()).isEqualTo("duplicate");
    assertThat(second.json().get(0).get("message_id")).isEqualTo(first.get(0).get("message_id"));
    assertThat(second.json().get(1).get("status").asText()).isEqualTo("queued");
    assertThat(broker().sqlLong(countInPartition("again"))).isEqualTo(2);
    assertThat(
            broker()
                .sqlLong(
                    "select last_offset from queen.log_partitions p join queen.queues q"
                        + " on q.id = p.queue_id where q.name = 'again'"))
        .isEqualTo(1);

    TestBroker.Reply onlyDup =
        broker().post("/api/v1/push", items(List.of(item("again", "p", "k1", object()))));
    assertThat(onlyDup.status()).as("nothing stored").isEqualTo(200);
  }

  @Test
  void theSameTransactionIdInTwoPartitionsIsTwoMessages() {
    JsonNode r =
        broker()
            .post(
                "/api/v1/push",
                items(
                    List.of(
                        item("twoparts", "a", "k", object()),
                        item("twoparts", "b", "k", object()))))
            .json();
    assertThat(r.get(0).get("status").asText()).isEqualTo("queued");
    assertThat(r.get(1).get("status").asText()).isEqualTo("queued");
  }

  @Test
  void eightConcurrentPushesOfOneKeyQueueExactlyOnce() throws Exception {
    for (int round = 0; round < 10; round++) {
      String txn = "race-" + round;
      int r = round;
      CyclicBarrier start = new CyclicBarrier(8);
      List<Callable<JsonNode>> pushes = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        int n = i;
        pushes.add(
            () -> {
              start.await();
              return broker()
                  .post(
                      "/api/v1/push",
                      items(
                          List.of(
                              item("race", "Default", txn, object().put("from", n)),
                              item("race", "other-" + n, "own-" + r + "-" + n, object()))))
                  .json();
            });
      }
      List<JsonNode> answers = new ArrayList<>();
      try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
        for (Future<JsonNode> f : pool.invokeAll(pushes)) {
          answers.add(f.get());
        }
      }
      List<JsonNode> contested = answers.stream().map(a -> a.get(0)).toList();
      assertThat(contested.stream().filter(a -> a.get("status").asText().equals("queued")))
          .hasSize(1);
      Set<String> ids =
          contested.stream().map(a -> a.get("message_id").asText()).collect(Collectors.toSet());
      assertThat(ids).as("every duplicate names the winner").hasSize(1);
      assertThat(answers).allMatch(a -> a.get(1).get("status").asText().equals("queued"));
    }
    assertThat(broker().sqlLong(countInPartition("race") + " and p.name = 'Default'"))
        .isEqualTo(10);
  }

  @Test
  void payloadDefaultsToAnEmptyObjectAndNullIsKept() {
    broker()
        .post(
            "/api/v1/push",
            items(
                List.of(
                    object().put("queue", "payloads").put("transactionId", "absent"),
                    item("payloads", "Default", "null", NullNode.getInstance()))));
    JsonNode popped = wire.popPartition("payloads", "Default", "batch=10&autoAck=true").json();
    assertThat(popped.get("messages").get(0).get("data")).isEqualTo(object());
    assertThat(popped.get("messages").get(1).get("data").isNull()).isTrue();
    assertThat(popped.get("messages").get(1).has("data")).isTrue();
  }

  @Test
  void generatesATransactionIdWhenAbsentOrEmpty() {
    JsonNode r =
        broker()
            .post(
                "/api/v1/push",
                items(
                    List.of(
                        object().put("queue", "gen"),
                        object().put("queue", "gen").put("transactionId", ""))))
            .json();
    assertThat(r.get(0).get("transaction_id").asText()).isNotEmpty();
    assertThat(r.get(1).get("transaction_id").asText())
        .isNotEmpty()
        .isNotEqualTo(r.get(0).get("transaction_id").asText());
  }

  @Test
  void anEmptyItemsArrayIsCreatedWithNothing() {
    TestBroker.Reply r = broker().post("/api/v1/push", "{\"items\":[]}");
    assertThat(r.status()).isEqualTo(201);
    assertThat(r.json()).isEmpty();
  }

  @Test
  void traceIdMustBeAUuid() {
    String trace = "5f0e8a0c-8a5e-4b8e-9c1c-0e7f2f4a7b11";
    JsonNode ok =
        broker()
            .post(
                "/api/v1/push",
                items(List.of(item("traced", "Default", "t", object()).put("traceId", trace))))
            .json();
    assertThat(ok.get(0).get("trace_id").asText()).isEqualTo(trace);
    TestBroker.Reply bad =
        broker()
            .post(
                "/api/v1/push",
                items(
                    List.of(
                        item("traced", "Default", "t2", object()).put("traceId", "not-a-uuid"))));
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.json().get("error").asText()).contains("TraceId");
  }

  @Test
  void badInputIsA400NamingTheProblemAndStoresNothing() {
    long before = broker().sqlLong("select count(*) from queen.log_segments");
    long queues = broker().sqlLong("select count(*) from queen.queues");
    assertBad("", "Empty request body");
    assertBad("{\"items\":", "Invalid JSON");
    assertBad("[1,2]", "Request body must be a JSON object");
    assertBad("{}", "items array is required");
    assertBad("{\"items\":{}}", "items array is required");
    assertBad("{\"items\":[42]}", "Each item must be an object");
    assertBad("{\"items\":[{\"payload\":{}}]}", "Queue must be a string");
    assertBad("{\"items\":[{\"queue\":7}]}", "Queue must be a string");
    assertBad("{\"items\":[{\"queue\":\"q\",\"partition\":null}]}", "Partition must be a string");
    assertBad(
        "{\"items\":[{\"queue\":\"q\",\"transactionId\":5}]}", "TransactionId must be a string");
    assertBad("{\"items\":[{\"queue\":\"q\",\"traceId\":null}]}", "TraceId must be a string");
    // one bad item fails the whole request before anything is written
    assertBad(
        "{\"items\":[{\"queue\":\"valid\"},{\"queue\":\"valid\",\"partition\":3}]}",
        "Partition must be a string (items[1])");
    assertThat(broker().sqlLong("select count(*) from queen.log_segments")).isEqualTo(before);
    assertThat(broker().sqlLong("select count(*) from queen.queues")).isEqualTo(queues);
  }

  private void assertBad(String body, String message) {
    TestBroker.Reply r = broker().post("/api/v1/push", body);
    assertThat(r.status()).as(body).isEqualTo(400);
    assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
    assertThat(r.json().get("error").asText()).as(body).contains(message);
  }

  /** Messages stored in the queue's partitions. */
  private static String countInPartition(String queue) {
    return "select coalesce(sum(s.msg_count), 0) from queen.log_segments s join"
        + " queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id ="
        + " p.queue_id where q.name = '"
        + queue
        + "'";
  }
}
