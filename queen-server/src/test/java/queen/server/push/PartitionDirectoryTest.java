package queen.server.push;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.store.Database;
import queen.server.store.PartitionKey;
import queen.server.store.PushStore;
import queen.server.store.QueueStore;

/** The push path's cache of partition ids, over a real database, when a cached id goes stale. */
class PartitionDirectoryTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static final PartitionKey GONE = new PartitionKey("orders", "gone");
  private static final PartitionKey SIBLING = new PartitionKey("orders", "kept");
  private static final PartitionKey ELSEWHERE = new PartitionKey("audit", "kept");

  @Test
  void aPushThatFindsItsPartitionRemovedForgetsItAndNoOther() throws Exception {
    try (Database db = Database.open(broker.db())) {
      PartitionDirectory directory = new PartitionDirectory(new QueueStore(db));
      PushService push =
          new PushService(
              new PushStore(db),
              directory,
              InstantSource.system(),
              (queue, partition, count, bytes) -> {},
              new PayloadSealing(null, id -> {}),
              2);
      push.push(List.of(item(GONE), item(SIBLING), item(ELSEWHERE)));
      // removed as inactive (or its queue deleted) after this broker cached its id
      broker.sql("delete from queen.log_partitions where name = 'gone'");

      assertThat(push.push(List.of(item(GONE))))
          .extracting(PushResult::status)
          .containsExactly(PushResult.Status.QUEUED);

      assertThat(broker.sqlLong("select count(*) from queen.log_partitions where name = 'gone'"))
          .as("created again")
          .isEqualTo(1);
      // dropping every id made the next push to each of up to 200,000 partitions a lookup
      assertThat(directory.knows(SIBLING)).as("its queue's other partition").isTrue();
      assertThat(directory.knows(ELSEWHERE)).as("another queue's partition").isTrue();
    }
  }

  private static PushItem item(PartitionKey key) {
    return new PushItem(
        key.queue(), key.partition(), "{}".getBytes(StandardCharsets.UTF_8), null, null, null);
  }
}
