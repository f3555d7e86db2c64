package queen.server.pop;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;
import queen.server.store.Claim;
import queen.server.store.Database;
import queen.server.store.PartitionClaim;
import queen.server.store.PopStore;

/**
 * Retention or a clear that commits between a pop's plan and its read of the blobs (each statement
 * of the pop reads anew, and a stub's blob is read after the claim committed): the pop delivers
 * nothing, and holds no lease over nothing.
 */
class VanishedSlicesTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private final Wire wire = new Wire(broker);

  @Test
  void aPopWhoseSlicesWereDeletedUnderItLeavesThePartitionFree() {
    wire.pushNumbered("vanish", "p", 0, 5);
    // where the pop takes its lease, after its plan and before its reads: as a clear of 0-4 there
    broker.sql(
        "create or replace function queen.pop_commit_lease_v1() returns void language sql as $$"
            + " delete from queen.log_segments s using queen.log_partitions p, queen.queues q"
            + " where s.partition_id = p.id and p.queue_id = q.id and q.name = 'vanish'"
            + " and s.base_offset < 5 $$");
    assertThat(wire.popPartition("vanish", "p", "batch=10&consumerGroup=g").status())
        .isEqualTo(204);

    wire.pushNumbered("vanish", "p", 5, 5);
    TestBroker.Reply next = wire.popPartition("vanish", "p", "batch=10&consumerGroup=g");
    assertThat(next.status())
        .as("not held by a lease over nothing until it expires")
        .isEqualTo(200);
    assertThat(Wire.numbers(next.json())).containsExactly(5, 6, 7, 8, 9);
    assertThat(wire.ackAll(next.json()).get(0).get("success").asBoolean()).isTrue();
  }

  @Test
  void aPopWhoseStubbedSegmentWasDeletedBeforeItsBlobWasReadGivesItsLeaseBack() {
    wire.pushBig("stubgone"); // the pops after its first get a stub
    TestBroker.Reply first = wire.popPartition("stubgone", "p", "batch=1&consumerGroup=g");
    assertThat(wire.ackAll(first.json()).get(0).get("success").asBoolean()).isTrue();

    Claim claim = new Claim("g", UUID.randomUUID(), 1, 1, false, false, null, 1 << 20, 4 << 20);
    PopRequest request =
        new PopRequest(new PopTarget.Partition("stubgone", "p"), "g", 1, 1, false, false, null, 0);
    List<String> gaveBack = new ArrayList<>();
    try (Database db = Database.open(broker.db())) {
      PopStore store = new PopStore(db);
      List<PartitionClaim> claims = store.popSpecific("stubgone", "p", claim);
      assertThat(claims.getFirst().slices().getFirst().leftOut()).as("a stub").isTrue();
      broker.sql(
          "delete from queen.log_segments where partition_id = '"
              + claims.getFirst().partitionId()
              + "'");
      DeliveryListener listener =
          new DeliveryListener() {
            @Override
            public void leased(UUID leaseId, String group, List<Leased> partitions) {}

            @Override
            public void skipped(UUID leaseId, String group, List<Skipped> messages) {}

            @Override
            public void gaveBack(UUID leaseId, String group, String queue, String partition) {
              gaveBack.add(queue + "/" + partition);
            }
          };
      FrameCut cut =
          new Handover(store, new SegmentCache(64 << 20, new SimpleMeterRegistry()), listener)
              .cut(request, claim, claims);
      assertThat(cut.result().isEmpty()).isTrue();
    }
    assertThat(gaveBack).as("the ring told").containsExactly("stubgone/p");
    assertThat(
            broker.sqlLong(
                "select count(*) from queen.log_consumers where consumer_group = 'g'"
                    + " and lease_expires_at > now()"))
        .as("no lease over nothing until it expires")
        .isZero();
  }
}
