package queen.server.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Message ids: unique, version 7, and in offset order within a partition's millisecond. */
class MessageIdsTest {
  private static final Instant AT = Instant.parse("2026-12-07T10:00:00.123Z");

  /** As Queen's stream runners compare ids: their text, which is the unsigned order. */
  private static final Comparator<UUID> AS_TEXT = Comparator.comparing(UUID::toString);

  // a runner orders a batch by (createdAt, id) and acks its last message: in hash order it acked
  // one in the middle, and the rest of the batch came back and was counted twice
  @Test
  void theMessagesOfOnePartitionInOneMillisecondSortByOffset() {
    Random random = new Random(7);
    for (int p = 0; p < 200; p++) {
      UUID partition = new UUID(random.nextLong(), random.nextLong());
      long base = p % 2 == 0 ? random.nextInt(1_000_000) : (1L << 40) + random.nextInt(1_000);
      List<UUID> ids = new ArrayList<>();
      for (long offset = base; offset < base + 2_000; offset++) {
        ids.add(MessageIds.of(partition, offset, AT));
      }
      List<UUID> sorted = new ArrayList<>(ids);
      sorted.sort(AS_TEXT);
      assertThat(sorted).as("partition %s from offset %d", partition, base).isEqualTo(ids);
      sorted.sort(Comparator.naturalOrder());
      assertThat(sorted).as("and as Java compares them").isEqualTo(ids);
    }
  }

  @Test
  void idsAreVersion7AndTimeOrderedAndUniqueAcrossPartitionsAtTheSameOffsets() {
    Random random = new Random(11);
    Set<UUID> seen = new HashSet<>();
    for (int p = 0; p < 20_000; p++) {
      UUID partition = new UUID(random.nextLong(), random.nextLong());
      for (long offset = 0; offset < 5; offset++) {
        UUID id = MessageIds.of(partition, offset, AT);
        assertThat(id.version()).isEqualTo(7);
        assertThat(id.variant()).isEqualTo(2);
        assertThat(seen.add(id)).as("unique: partition %s offset %d", partition, offset).isTrue();
      }
      assertThat(
              AS_TEXT.compare(
                  MessageIds.of(partition, 1_000, AT),
                  MessageIds.of(partition, 0, AT.plusMillis(1))))
          .as("a later millisecond first")
          .isNegative();
    }
    assertThat(MessageIds.of(new UUID(1, 2), 3, AT))
        .isEqualTo(MessageIds.of(new UUID(1, 2), 3, AT));
  }
}
