package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

class ResourceRoutesTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  private JsonNode queue(String name) {
    for (JsonNode q : broker.get("/api/v1/resources/queues").json().get("queues")) {
      if (q.get("name").asText().equals(name)) {
        return q;
      }
    }
    return null;
  }

  private JsonNode group(String group, String queue) {
    for (JsonNode g : broker.get("/api/v1/consumer-groups").json()) {
      if (g.get("name").asText().equals(group) && g.get("queueName").asText().equals(queue)) {
        return g;
      }
    }
    return null;
  }

  private TestBroker.Reply delete(String queue) {
    return broker.send(
        HttpRequest.newBuilder(broker.uri("/api/v1/resources/queues/" + queue)).DELETE().build());
  }

  @Test
  void queueListCountsWhatIsStoredLeasedAndWaiting() {
    wire.pushNumbered("res-count", "p0", 0, 5);
    wire.pushNumbered("res-count", "p1", 0, 5);
    JsonNode leased = wire.popPartition("res-count", "p0", "batch=2").json();
    assertThat(leased.get("messages")).hasSize(2);

    JsonNode q = queue("res-count");
    assertThat(q.get("partitions").asInt()).isEqualTo(2);
    assertThat(q.get("messages").get("total").asInt()).isEqualTo(10);
    assertThat(q.get("messages").get("processing").asInt()).isEqualTo(2);
    assertThat(q.get("messages").get("pending").asInt()).isEqualTo(8);

    wire.ackAll(leased);
    JsonNode after = queue("res-count");
    assertThat(after.get("messages").get("processing").asInt()).isZero();
    assertThat(after.get("messages").get("pending").asInt()).isEqualTo(8);
  }

  @Test
  void aQueueDetailIsPagedByPartitionNameWithTheWholeQueuesTotals() {
    for (int i = 0; i < 5; i++) {
      wire.pushNumbered("res-paged", "p" + i, 0, i + 1);
    }
    wire.ackAll(wire.popPartition("res-paged", "p4", "batch=2").json());
    // the totals of a partial page come from the snapshot: make it current
    broker.post("/api/v1/stats/refresh", "{}");

    for (String route : List.of("/api/v1/resources/queues/", "/api/v1/status/queues/")) {
      List<String> names = new ArrayList<>();
      for (int offset = 0; offset < 5; offset += 2) {
        JsonNode page = broker.get(route + "res-paged?limit=2&offset=" + offset).json();
        assertThat(page.at("/pagination/total").asInt()).as(route).isEqualTo(5);
        assertThat(page.at("/pagination/limit").asInt()).isEqualTo(2);
        JsonNode totals =
            page.get("totals").has("messages") ? page.at("/totals/messages") : page.get("totals");
        assertThat(totals.get("total").asInt()).as("1+2+3+4+5, on every page").isEqualTo(15);
        assertThat(totals.get("completed").asInt()).as("two acked on p4").isEqualTo(2);
        page.get("partitions").forEach(p -> names.add(p.get("name").asText()));
      }
      assertThat(names).as(route).containsExactly("p0", "p1", "p2", "p3", "p4");

      JsonNode whole = broker.get(route + "res-paged").json();
      assertThat(whole.get("partitions")).as("default page of 100").hasSize(5);
      JsonNode past = broker.get(route + "res-paged?offset=10").json();
      assertThat(past.get("partitions")).isEmpty();
      assertThat(past.at("/pagination/total").asInt()).isEqualTo(5);
      TestBroker.Reply bad = broker.get(route + "res-paged?limit=many");
      assertThat(bad.status()).isEqualTo(400);
      assertThat(bad.text()).contains("limit");
    }
  }

  @Test
  void consumerGroupsReportLagPerQueue() {
    wire.pushNumbered("res-groups", "p0", 0, 3);
    wire.pushNumbered("res-groups", "p1", 0, 3);
    JsonNode p0 = wire.popPartition("res-groups", "p0", "batch=10&consumerGroup=billing").json();
    wire.ackAll(p0);
    wire.popPartition("res-groups", "p1", "batch=1&consumerGroup=billing");

    JsonNode g = group("billing", "res-groups");
    assertThat(g).isNotNull();
    assertThat(g.get("topics").get(0).asText()).isEqualTo("res-groups");
    assertThat(g.get("members").asInt()).isEqualTo(2);
    assertThat(g.get("partitionsWithLag").asInt()).isEqualTo(1);
    assertThat(g.get("totalLag").asInt()).isEqualTo(3);
    assertThat(g.get("state").asText()).isEqualTo("Lagging");
    assertThat(g.get("maxTimeLag").asLong()).isGreaterThanOrEqualTo(0);
  }

  @Test
  void aGroupsLagCountsPartitionsItHasNoCursorOnYet() {
    wire.pushNumbered("res-uncursored", "p1", 0, 3);
    wire.ackAll(wire.popPartition("res-uncursored", "p1", "batch=10&consumerGroup=idle").json());
    assertThat(group("idle", "res-uncursored").get("state").asText()).isEqualTo("Stable");
    // the group's consumers are gone; a partition it never popped fills up
    wire.pushNumbered("res-uncursored", "p2", 0, 100);
    JsonNode g = group("idle", "res-uncursored");
    assertThat(g.get("totalLag").asInt()).isEqualTo(100);
    assertThat(g.get("partitionsWithLag").asInt()).isEqualTo(1);
    assertThat(g.get("members").asInt()).as("cursors").isEqualTo(1);
    assertThat(g.get("state").asText()).isEqualTo("Lagging");
  }

  @Test
  void aGroupSubscribedAtNewCountsOnlyWhatCameAfterItsSubscription() {
    wire.pushNumbered("res-late", "p0", 0, 2);
    wire.pushNumbered("res-late", "p1", 0, 2);
    assertThat(
            wire.popPartition("res-late", "p1", "batch=10&consumerGroup=late&subscriptionMode=new")
                .status())
        .isEqualTo(204);
    wire.pushNumbered("res-late", "p0", 2, 1); // no cursor: only this one counts
    wire.pushNumbered("res-late", "p1", 2, 1); // behind its cursor
    wire.pushNumbered("res-late", "p2", 0, 2); // created after the subscription: all of it
    JsonNode g = group("late", "res-late");
    assertThat(g.get("totalLag").asInt()).isEqualTo(4);
    assertThat(g.get("partitionsWithLag").asInt()).isEqualTo(3);
  }

  @Test
  void aGroupsLagAndTheQueueListLeaveOutWhatAClearDeleted() {
    wire.pushNumbered("res-cleared", "p", 0, 5);
    wire.ackAll(wire.popPartition("res-cleared", "p", "batch=2&consumerGroup=g").json());
    assertThat(group("g", "res-cleared").get("totalLag").asInt()).isEqualTo(3);
    JsonNode listed = queue("res-cleared").get("messages");
    assertThat(listed.get("total").asInt()).isEqualTo(5);
    assertThat(listed.get("pending").asInt()).as("read only by g: g's cursor").isEqualTo(3);
    assertThat(
            broker
                .send(
                    HttpRequest.newBuilder(broker.uri("/api/v1/queues/res-cleared/clear"))
                        .DELETE()
                        .build())
                .status())
        .isEqualTo(200);
    JsonNode g = group("g", "res-cleared");
    assertThat(g.get("totalLag").asInt()).as("the 3 unread were deleted").isZero();
    JsonNode stored = queue("res-cleared").get("messages");
    assertThat(stored.get("total").asInt()).as("the list counts what is stored").isZero();
    assertThat(stored.get("pending").asInt()).isZero();
    assertThat(g.get("state").asText()).isEqualTo("Stable");
    JsonNode detail = broker.get("/api/v1/consumer-groups/g").json();
    assertThat(detail.at("/res-cleared/partitions/0/offsetLag").asInt()).isZero();
  }

  @Test
  void deleteRemovesTheQueueAndAFreshPushRecreatesIt() {
    wire.pushNumbered("res-del", "p0", 0, 4);
    assertThat(queue("res-del")).isNotNull();

    TestBroker.Reply first = delete("res-del");
    assertThat(first.status()).isEqualTo(200);
    assertThat(first.json().get("deleted").asBoolean()).isTrue();
    assertThat(first.json().get("existed").asBoolean()).isTrue();
    assertThat(queue("res-del")).isNull();

    TestBroker.Reply again = delete("res-del");
    assertThat(again.json().get("deleted").asBoolean()).isTrue();
    assertThat(again.json().get("existed").asBoolean()).isFalse();

    // the broker's cached partition id is stale now: the push must find that out and recreate it
    wire.pushNumbered("res-del", "p0", 100, 1);
    JsonNode popped = wire.popPartition("res-del", "p0", "batch=10").json();
    assertThat(Wire.numbers(popped)).containsExactly(100);
  }

  @Test
  void aWholeBatchAckAfterItsQueueWasDeletedIsRefusedInTheBody() {
    wire.pushNumbered("res-gone", "p0", 0, 2);
    JsonNode leased = wire.popPartition("res-gone", "p0", "batch=2").json();
    assertThat(delete("res-gone").status()).isEqualTo(200);

    // the registry still holds the lease: its fast path finds no cursor and no partition
    JsonNode answer = wire.ackAll(leased);
    assertThat(answer).hasSize(2);
    for (JsonNode a : answer) {
      assertThat(a.get("success").asBoolean()).as(a.toString()).isFalse();
    }
    assertThat(queue("res-gone")).as("an ack creates no queue").isNull();
  }
}
