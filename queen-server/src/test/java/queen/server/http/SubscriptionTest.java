package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

class SubscriptionTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  @Test
  void modeNewOnANamedGroupSkipsTheBacklogAndIsRemembered() {
    wire.pushNumbered("news", "p", 0, 3);
    TestBroker.Reply first =
        wire.popPartition("news", "p", "consumerGroup=fresh&subscriptionMode=new&autoAck=true");
    assertThat(first.status()).as("nothing new yet, but subscribed").isEqualTo(204);
    wire.pushNumbered("news", "p", 3, 2);
    JsonNode later = wire.popPartition("news", "p", "consumerGroup=fresh&autoAck=true").json();
    assertThat(Wire.numbers(later)).containsExactly(3, 4);
  }

  @Test
  void modeNewOnTheWildcardRouteIsRecordedForTheWholeQueue() {
    wire.pushNumbered("wnews", "a", 0, 3);
    wire.pushNumbered("wnews", "b", 0, 3);
    assertThat(
            broker
                .get("/api/v1/pop/queue/wnews?consumerGroup=g&subscriptionMode=new&autoAck=true")
                .status())
        .isEqualTo(204);
    wire.pushNumbered("wnews", "b", 3, 1);
    JsonNode r = broker.get("/api/v1/pop/queue/wnews?consumerGroup=g&autoAck=true").json();
    assertThat(Wire.numbers(r)).containsExactly(3);
  }

  @Test
  void queueModeWithModeNewStillGetsTheBacklog() {
    wire.pushNumbered("qmode", "p", 0, 3);
    JsonNode r = wire.popPartition("qmode", "p", "subscriptionMode=new&autoAck=true").json();
    assertThat(Wire.numbers(r)).containsExactly(0, 1, 2);
    wire.pushNumbered("qmode-wild", "p", 0, 2);
    JsonNode w = broker.get("/api/v1/pop/queue/qmode-wild?subscriptionMode=new").json();
    assertThat(Wire.numbers(w)).containsExactly(0, 1);
  }

  @Test
  void aPartitionCreatedAfterTheGroupSubscribedDeliversItsWholeBacklog() {
    wire.pushNumbered("growing", "old", 0, 2);
    wire.popPartition("growing", "old", "consumerGroup=sub&subscriptionMode=new");
    wire.pushNumbered("growing", "brand-new", 0, 4);
    JsonNode r =
        wire.popPartition("growing", "brand-new", "consumerGroup=sub&subscriptionMode=new").json();
    assertThat(Wire.numbers(r)).containsExactly(0, 1, 2, 3);
  }

  @Test
  void subscriptionFromATimestampStartsAtTheFirstMessageAtOrAfterIt() {
    wire.pushNumbered("fromts", "p", 0, 2);
    Instant between =
        Instant.ofEpochMilli(
                broker.sqlLong(
                    "select (extract(epoch from max(s.created_at)) * 1000)::bigint + 1"
                        + " from queen.log_segments s join queen.log_partitions p on p.id ="
                        + " s.partition_id join queen.queues q on q.id = p.queue_id"
                        + " where q.name = 'fromts'"))
            .truncatedTo(ChronoUnit.MILLIS);
    await(between);
    wire.pushNumbered("fromts", "p", 2, 2);
    JsonNode r =
        wire.popPartition(
                "fromts", "p", "consumerGroup=ts&autoAck=true&subscriptionFrom=" + between)
            .json();
    assertThat(Wire.numbers(r)).containsExactly(2, 3);
  }

  @Test
  void anExistingCursorIsNeverReseeded() {
    wire.pushNumbered("keep", "p", 0, 4);
    JsonNode a = wire.popPartition("keep", "p", "consumerGroup=k&batch=1&autoAck=true").json();
    assertThat(Wire.numbers(a)).containsExactly(0);
    JsonNode b =
        wire.popPartition("keep", "p", "consumerGroup=k&batch=1&autoAck=true&subscriptionMode=new")
            .json();
    assertThat(Wire.numbers(b)).containsExactly(1);
  }

  /** Waits until the database clock has passed t, so that the next push is stamped after it. */
  private static void await(Instant t) {
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(5))
        .until(() -> broker.sqlLong("select (now() > '" + t + "'::timestamptz)::int") == 1);
  }

  // "new" is as of the pop's arrival: a long-poll woken by the push that made its queue took its
  // subscription at the claim, after that push, and skipped it
  @Test
  void modeNewParkedBeforeItsQueueExistedDeliversThePushThatWokeIt() throws Exception {
    java.util.concurrent.CompletableFuture<TestBroker.Reply> parked =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () ->
                broker.get(
                    "/api/v1/pop/queue/fresh?consumerGroup=g&subscriptionMode=new"
                        + "&autoAck=true&wait=true&timeout=10000"));
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .until(() -> broker.metric("queen_queue_parked_consumers", "queue=\"fresh\"") >= 1);
    wire.pushNumbered("fresh", "p", 0, 1);
    TestBroker.Reply woken = parked.get(15, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(woken.status()).isEqualTo(200);
    assertThat(Wire.numbers(woken.json())).containsExactly(0);
  }
}
