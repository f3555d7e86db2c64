package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/** Message browsing (WIRE.md section 13): the list and one message's detail. */
class MessageBrowseTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void theListIsNewestFirstWithStatusesAndFilters() {
    wire.pushNumbered("browse", "a", 0, 3);
    wire.pushNumbered("browse", "b", 0, 2);
    JsonNode leased = broker.get("/api/v1/pop/queue/browse/partition/a?batch=2").json();
    wire.ackAll(
        Wire.object()
            .put("consumerGroup", "__QUEUE_MODE__")
            .set("messages", Wire.object().arrayNode().add(leased.get("messages").get(0))));

    JsonNode all = broker.get("/api/v1/messages?queue=browse").json();
    assertThat(all.get("messages"))
        .extracting(m -> m.get("transactionId").asText())
        .containsExactly("browse-b-1", "browse-b-0", "browse-a-2", "browse-a-1", "browse-a-0");
    JsonNode a0 = all.get("messages").get(4);
    assertThat(a0.get("status").asText()).isEqualTo("completed");
    assertThat(a0.get("queuePath").asText()).isEqualTo("browse/a");
    assertThat(a0.has("payload")).as("no payloads in the list").isFalse();
    assertThat(all.get("messages").get(3).get("status").asText()).isEqualTo("processing");
    assertThat(all.get("messages").get(3).get("leaseExpiresAt").asText()).endsWith("Z");
    assertThat(all.get("messages").get(2).get("status").asText()).isEqualTo("pending");
    assertThat(all.at("/mode/type").asText()).isEqualTo("queue");

    assertThat(
            broker
                .get("/api/v1/messages?queue=browse&partition=a&status=pending")
                .json()
                .get("messages"))
        .extracting(m -> m.get("transactionId").asText())
        .containsExactly("browse-a-2");
    assertThat(broker.get("/api/v1/messages?queue=browse&limit=2&offset=1").json().get("messages"))
        .extracting(m -> m.get("transactionId").asText())
        .containsExactly("browse-b-0", "browse-a-2");
    // beyond the deepest page: a 400, not that page again (a client paging to an empty one looped)
    TestBroker.Reply deep = broker.get("/api/v1/messages?queue=browse&offset=250000");
    assertThat(deep.status()).isEqualTo(400);
    assertThat(deep.json().get("error").asText()).contains("offset");
    TestBroker.Reply status = broker.get("/api/v1/status/queues/browse/messages?offset=100001");
    assertThat(status.status()).as("the dashboard's list too").isEqualTo(400);
    assertThat(
            broker
                .get("/api/v1/messages?queue=browse&to=2000-01-01T00:00:00Z")
                .json()
                .get("messages"))
        .isEmpty();
  }

  // a named partition is found by the id derived from each matching queue and its name
  @Test
  void aPartitionNamedWithoutItsQueueIsListedFromEveryQueueThatHasItNewestFirst() {
    wire.pushNumbered("named-1", "shared", 0, 2);
    wire.pushNumbered("named-2", "shared", 0, 2);
    wire.pushNumbered("named-2", "other", 0, 1);
    assertThat(broker.get("/api/v1/messages?partition=shared").json().get("messages"))
        .extracting(m -> m.get("transactionId").asText())
        .containsExactly(
            "named-2-shared-1", "named-2-shared-0", "named-1-shared-1", "named-1-shared-0");
    assertThat(broker.get("/api/v1/messages?partition=shared&limit=3").json().get("messages"))
        .extracting(m -> m.get("queuePath").asText())
        .containsExactly("named-2/shared", "named-2/shared", "named-1/shared");
    assertThat(broker.get("/api/v1/messages?queue=named-1&partition=other").json().get("messages"))
        .isEmpty();
  }

  @Test
  void theQueueWidePageReadsDeeperIntoThePartitionsThatHoldIt() {
    // one segment per push: "hot" holds 20 of the newest 23 in 20 segments, deeper than the
    // first round's 4 per partition
    wire.pushNumbered("deep", "x", 0, 1);
    wire.pushNumbered("deep", "y", 0, 1);
    for (int i = 0; i < 20; i++) {
      wire.pushNumbered("deep", "hot", i, 1);
    }
    wire.pushNumbered("deep", "z", 0, 1);
    List<String> hot = new ArrayList<>();
    for (int i = 19; i >= 0; i--) {
      hot.add("deep-hot-" + i);
    }

    List<String> expected = new ArrayList<>();
    expected.add("deep-z-0");
    expected.addAll(hot.subList(0, 14));
    assertThat(wire.messageIds("/api/v1/messages?queue=deep&limit=15")).isEqualTo(expected);
    assertThat(wire.messageIds("/api/v1/messages?queue=deep&limit=5&offset=19"))
        .containsExactly("deep-hot-1", "deep-hot-0", "deep-y-0", "deep-x-0");
    assertThat(wire.messageIds("/api/v1/status/queues/deep/messages?limit=3&offset=10"))
        .containsExactly("deep-hot-10", "deep-hot-9", "deep-hot-8");

    // a window that starts inside the hot partition: its older segments are not read
    String from =
        broker.sqlText(
            "select to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
                + " from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id"
                + " where p.name = 'hot' and s.base_offset = 10");
    List<String> windowed = new ArrayList<>();
    windowed.add("deep-z-0");
    windowed.addAll(hot.subList(0, 10));
    assertThat(wire.messageIds("/api/v1/messages?queue=deep&limit=50&from=" + from))
        .isEqualTo(windowed);
  }

  // the page's candidates are read newest write first, a few at a time: the page must still be
  // exactly the newest messages of every partition, whichever partitions hold it
  @Test
  void aQueueWidePageOverManyPartitionsIsExactlyTheNewestMessagesOfAll() {
    Random random = new Random(17);
    int[] next = new int[40];
    for (int round = 0; round < 3; round++) {
      List<Integer> order = new ArrayList<>();
      for (int i = 0; i < next.length; i++) {
        order.add(i);
      }
      Collections.shuffle(order, random);
      for (int i : order) {
        int count = 1 + random.nextInt(i % 5 == 0 ? 4 : 2);
        wire.pushNumbered("wide", "p" + i, next[i], count);
        next[i] += count;
      }
    }
    // two hot partitions with more segments than the first round's depth of 4
    for (int push = 0; push < 6; push++) {
      for (int i = 1; i <= 2; i++) {
        wire.pushNumbered("wide", "p" + i, next[i]++, 1);
      }
    }
    String all =
        broker.sqlText(
            "select string_agg('wide-' || m.name || '-' || m.off, ',' order by m.created_at desc,"
                + " m.off desc, m.id) from (select p.id, p.name, s.created_at, s.base_offset + g"
                + " as off from queen.log_segments s join queen.log_partitions p on p.id ="
                + " s.partition_id join queen.queues q on q.id = p.queue_id"
                + " cross join generate_series(0, s.msg_count - 1) g where q.name = 'wide') m");
    List<String> expected = List.of(all.split(","));
    assertThat(expected.size()).isGreaterThan(150);

    assertThat(wire.messageIds("/api/v1/messages?queue=wide&limit=30"))
        .isEqualTo(expected.subList(0, 30));
    assertThat(wire.messageIds("/api/v1/messages?queue=wide&limit=50&offset=50"))
        .isEqualTo(expected.subList(50, 100));
    assertThat(wire.messageIds("/api/v1/messages?queue=wide&limit=1000")).isEqualTo(expected);
    // nothing was consumed: every message is pending, read in batches on plain PostgreSQL too
    assertThat(wire.messageIds("/api/v1/messages?queue=wide&status=pending&limit=30"))
        .isEqualTo(expected.subList(0, 30));
    assertThat(wire.messageIds("/api/v1/messages?queue=wide&status=pending&limit=50&offset=50"))
        .isEqualTo(expected.subList(50, 100));
    assertThat(wire.messageIds("/api/v1/messages?queue=wide&status=pending&limit=1000"))
        .isEqualTo(expected);
  }

  // one push stamps all its partitions' segments alike: among equal dates the page orders by
  // offset, then partition id, so its 30th-40th messages are the newest of the 31st-40th partitions
  // by id of those with three messages, taken whether they are in the first round's candidates or
  // in cursors read after it
  @Test
  void aPageInsideOnePushOverManyPartitionsIsExactlyItsMessagesInOrder() {
    List<ObjectNode> items = new ArrayList<>();
    for (int i = 0; i < 80; i++) {
      for (int n = 0; n < (i % 8 < 5 ? 3 : 1); n++) {
        items.add(Wire.item("ties", "p" + i, "ties-p" + i + "-" + n, Wire.object().put("n", n)));
      }
    }
    assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
    List<String> expected = wire.messageIds("/api/v1/messages?queue=ties&limit=1000");
    assertThat(expected).hasSize(180);
    assertThat(expected.subList(0, 50)).allMatch(id -> id.endsWith("-2"));

    for (String filter : List.of("", "&status=pending")) {
      assertThat(wire.messageIds("/api/v1/messages?queue=ties&limit=10" + filter))
          .isEqualTo(expected.subList(0, 10));
      assertThat(wire.messageIds("/api/v1/messages?queue=ties&limit=10&offset=30" + filter))
          .isEqualTo(expected.subList(30, 40));
    }
  }

  // pending takes the newest 256 partitions first: when none of them holds a pending message, the
  // page reads the cursors of the next ones
  @Test
  void aPendingPageLooksPastNewerPartitionsThatHoldNone() {
    List<ObjectNode> older = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      for (int n = 0; n < 2; n++) {
        older.add(Wire.item("past", "a" + i, "past-a" + i + "-" + n, Wire.object().put("n", n)));
      }
    }
    assertThat(broker.post("/api/v1/push", Wire.items(older)).status()).isEqualTo(201);
    List<ObjectNode> newer = new ArrayList<>();
    for (int i = 0; i < 280; i++) {
      newer.add(Wire.item("past", "b" + i, "past-b" + i, Wire.object().put("n", 0)));
    }
    assertThat(broker.post("/api/v1/push", Wire.items(newer)).status()).isEqualTo(201);
    for (int i = 0; i < 280; i++) {
      assertThat(wire.popPartition("past", "b" + i, "batch=1&autoAck=true").status())
          .isEqualTo(200);
    }

    List<String> expected =
        Wire.withStatus(
            broker.get("/api/v1/messages?queue=past&limit=1000").json().get("messages"), "pending");
    assertThat(expected).hasSize(40).allMatch(id -> id.startsWith("past-a"));
    assertThat(wire.messageIds("/api/v1/messages?queue=past&status=pending&limit=1000"))
        .isEqualTo(expected);
    assertThat(wire.messageIds("/api/v1/messages?queue=past&status=pending&limit=10&offset=5"))
        .isEqualTo(expected.subList(5, 15));
  }

  // a partition written after an explicit `to` may hold the window's newest messages, or none:
  // ten such partitions must not take the places of those holding the page
  @Test
  void aPastWindowIsPagedFromEveryPartitionNotOnlyTheNewestWritten() {
    for (int i = 0; i < 30; i++) {
      wire.pushNumbered("window", "w" + i, 0, 1);
    }
    Instant to = lastWrite();
    for (int i = 0; i < 10; i++) {
      wire.pushNumbered("window", "w" + i, 1, 1);
    }

    List<String> expected = new ArrayList<>();
    for (int i = 29; i >= 0; i--) {
      expected.add("window-w" + i + "-0");
    }
    for (String filter : List.of("", "&status=pending")) {
      assertThat(wire.messageIds("/api/v1/messages?queue=window&limit=5&to=" + to + filter))
          .as("filter '%s'", filter)
          .isEqualTo(expected.subList(0, 5));
      assertThat(
              wire.messageIds("/api/v1/messages?queue=window&limit=8&offset=20&to=" + to + filter))
          .isEqualTo(expected.subList(20, 28));
      assertThat(wire.messageIds("/api/v1/messages?queue=window&limit=100&to=" + to + filter))
          .isEqualTo(expected);
    }
  }

  // a partition named without its queue is looked up in every queue: with a past `to`, those
  // written after it are read too
  @Test
  void aPastWindowOfAPartitionNamedInEveryQueueIsPagedFromAllOfThem() {
    for (int i = 0; i < 12; i++) {
      wire.pushNumbered("named" + i, "shared", 0, 1);
    }
    Instant to = lastWrite();
    for (int i = 0; i < 10; i++) {
      wire.pushNumbered("named" + i, "shared", 1, 1);
    }
    assertThat(wire.messageIds("/api/v1/messages?partition=shared&limit=2&to=" + to))
        .containsExactly("named11-shared-0", "named10-shared-0");
  }

  // a status filter reads the cursors of every candidate it needs, not only of the limit + offset
  // most recently written partitions
  @Test
  void aCompletedPageFindsItsMessageInThePartitionWrittenLongestAgo() {
    wire.pushNumbered("aged", "old", 0, 1);
    assertThat(wire.popPartition("aged", "old", "batch=1&autoAck=true").status()).isEqualTo(200);
    for (int i = 0; i < 5; i++) {
      wire.pushNumbered("aged", "new" + i, 0, 1);
    }
    assertThat(wire.messageIds("/api/v1/messages?queue=aged&status=completed&limit=1"))
        .containsExactly("aged-old-0");
  }

  // each filter agrees with the statuses of the unfiltered list, in its order and paged
  @Test
  void eachStatusFilterListsExactlyTheMessagesOfThatStatusNewestFirst() {
    // one segment per message; in queue mode on "qa": 0-3 completed, 4 dead-lettered (no retries),
    // 5-7 leased, the rest pending; "ga" is read only by the group g, which consumed 0-4
    wire.configure("stq", Wire.object().put("retryLimit", 0));
    for (int i = 0; i < 12; i++) {
      wire.pushNumbered("stq", "qa", i, 1);
    }
    for (int i = 0; i < 8; i++) {
      wire.pushNumbered("stq", "ga", i, 1);
    }
    wire.ackAll(wire.popPartition("stq", "qa", "batch=4").json());
    wire.ackAll(wire.popPartition("stq", "qa", "batch=1").json(), "failed", "boom");
    assertThat(wire.popPartition("stq", "qa", "batch=3").json().get("messages")).hasSize(3);
    wire.ackAll(wire.popPartition("stq", "ga", "batch=5&consumerGroup=g").json());

    JsonNode all = broker.get("/api/v1/messages?queue=stq&limit=100").json().get("messages");
    assertThat(all).hasSize(20);
    for (String status : List.of("pending", "processing", "completed", "dead_letter")) {
      List<String> expected = Wire.withStatus(all, status);
      assertThat(wire.messageIds("/api/v1/messages?queue=stq&limit=100&status=" + status))
          .as(status)
          .isEqualTo(expected);
      assertThat(wire.messageIds("/api/v1/messages?queue=stq&limit=2&offset=1&status=" + status))
          .as(status + ", paged")
          .isEqualTo(expected.subList(Math.min(1, expected.size()), Math.min(3, expected.size())));
    }
    assertThat(wire.messageIds("/api/v1/messages?queue=stq&status=dead_letter"))
        .containsExactly("stq-qa-4");
    assertThat(wire.messageIds("/api/v1/messages?queue=stq&status=processing"))
        .containsExactly("stq-qa-7", "stq-qa-6", "stq-qa-5");
    assertThat(wire.messageIds("/api/v1/messages?queue=stq&status=completed"))
        .containsExactlyInAnyOrder(
            "stq-qa-3",
            "stq-qa-2",
            "stq-qa-1",
            "stq-qa-0",
            "stq-ga-4",
            "stq-ga-3",
            "stq-ga-2",
            "stq-ga-1",
            "stq-ga-0");
  }

  // segments between two dead letters hold none: a page of them reads past those
  @Test
  void deadLettersFarApartAreFoundPageByPage() {
    wire.configure("dlgap", Wire.object().put("retryLimit", 0));
    for (int i = 0; i < 11; i++) {
      wire.pushNumbered("dlgap", "p", i, 1);
    }
    wire.ackAll(wire.popPartition("dlgap", "p", "batch=1").json(), "failed", "first");
    wire.ackAll(wire.popPartition("dlgap", "p", "batch=9").json());
    wire.ackAll(wire.popPartition("dlgap", "p", "batch=1").json(), "failed", "last");
    assertThat(wire.messageIds("/api/v1/messages?queue=dlgap&status=dead_letter"))
        .containsExactly("dlgap-p-10", "dlgap-p-0");
    assertThat(wire.messageIds("/api/v1/messages?queue=dlgap&status=dead_letter&limit=1&offset=1"))
        .containsExactly("dlgap-p-0");
    assertThat(wire.messageIds("/api/v1/messages?queue=dlgap&status=completed&limit=2&offset=7"))
        .containsExactly("dlgap-p-2", "dlgap-p-1");
  }

  /** The newest segment's created_at, once the database's clock has passed it. */
  private static Instant lastWrite() {
    Instant at = broker.sqlInstant("select max(created_at) from queen.log_segments");
    await().until(() -> broker.sqlInstant("select clock_timestamp()").isAfter(at));
    return at;
  }

  @Test
  void oneMessageShowsItsPayloadItsGroupsAndItsTraces() {
    wire.pushNumbered("detail", "p", 0, 2);
    JsonNode g1 =
        broker.get("/api/v1/pop/queue/detail/partition/p?consumerGroup=g1&batch=1").json();
    wire.ackAll(g1);
    broker.get("/api/v1/pop/queue/detail/partition/p?consumerGroup=g2&batch=1");
    JsonNode m = g1.get("messages").get(0);
    broker.post(
        "/api/v1/traces",
        Wire.object()
            .put("transactionId", "detail-p-0")
            .put("partitionId", m.get("partitionId").asText())
            .put("traceNames", "seen")
            .set("data", Wire.object().put("ok", true)));

    JsonNode d =
        broker.get("/api/v1/messages/" + m.get("partitionId").asText() + "/detail-p-0").json();
    assertThat(d.get("id").asText()).isEqualTo(m.get("id").asText());
    assertThat(d.get("payload").get("n").asInt()).isZero();
    assertThat(d.get("isEncrypted").asBoolean()).isFalse();
    assertThat(d.get("status").asText()).as("g1 consumed it, g2 holds it").isEqualTo("pending");
    assertThat(d.at("/mode/type").asText()).isEqualTo("bus");
    assertThat(d.at("/mode/consumedByGroups").asInt()).isEqualTo(1);
    assertThat(d.get("consumerGroups"))
        .extracting(g -> g.get("name").asText() + ":" + g.get("status").asText())
        .containsExactly("g1:completed", "g2:processing");
    assertThat(d.at("/queueConfig/leaseTime").asInt()).isEqualTo(300);
    assertThat(d.at("/traces/0/data/ok").asBoolean()).isTrue();
  }

  // a message its group acked inside a lease still live showed that lease (helper-141), also one
  // acked past a message not acked yet, which the cursor has not passed (helper-143)
  @Test
  void aMessageAckedInsideALiveLeaseShowsNoLease() {
    wire.pushNumbered("half", "p", 0, 3);
    JsonNode all = broker.get("/api/v1/pop/queue/half/partition/p?consumerGroup=g&batch=3").json();
    assertThat(all.get("messages")).hasSize(3);
    broker.post("/api/v1/ack", Wire.ack(all.get("messages").get(0), "completed", null));
    broker.post("/api/v1/ack", Wire.ack(all.get("messages").get(2), "completed", null));
    String partition = all.get("messages").get(0).get("partitionId").asText();

    for (String acked : List.of("half-p-0", "half-p-2")) {
      JsonNode done = broker.get("/api/v1/messages/" + partition + "/" + acked).json();
      assertThat(done.at("/consumerGroups/0/status").asText()).as(acked).isEqualTo("completed");
      assertThat(done.at("/consumerGroups/0/leaseExpiresAt").isNull()).as(acked).isTrue();
      assertThat(done.get("leaseExpiresAt").isNull()).as(acked).isTrue();
    }
    JsonNode held = broker.get("/api/v1/messages/" + partition + "/half-p-1").json();
    assertThat(held.at("/consumerGroups/0/status").asText()).isEqualTo("processing");
    assertThat(held.get("leaseExpiresAt").isNull()).as("the lease still holds it").isFalse();
  }

  @Test
  void unknownMessagesAndBadFiltersAreNamed() {
    wire.pushNumbered("mbad", "p", 0, 1);
    TestBroker.Reply unknown = broker.get("/api/v1/messages/" + UUID.randomUUID() + "/x");
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.json().get("error").asText()).isEqualTo("Message not found");
    TestBroker.Reply badStatus = broker.get("/api/v1/messages?status=done");
    assertThat(badStatus.status()).isEqualTo(400);
    assertThat(badStatus.json().get("error").asText()).startsWith("status must be one of");
    TestBroker.Reply badFrom = broker.get("/api/v1/messages?from=yesterday");
    assertThat(badFrom.status()).isEqualTo(400);
    assertThat(badFrom.json().get("error").asText()).startsWith("from must be an ISO-8601");
    assertThat(broker.get("/api/v1/messages/nope/x").status()).isEqualTo(400);
  }
}
