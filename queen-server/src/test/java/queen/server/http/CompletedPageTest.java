package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The message list filtered to completed messages (WIRE.md section 13): its partitions are taken in
 * the order of their newest completed message, dated by the cursors, not by their newest write.
 */
class CompletedPageTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();
  private final Wire wire = new Wire(broker);

  // consumed in an order unrelated to the pushes, then every partition written again: a page of
  // completed messages must still be exactly the newest of them, whichever partitions hold them
  @Test
  void aCompletedPageIsExactlyTheNewestCompletedMessagesWhereverEachGroupStands() {
    Random random = new Random(23);
    // cursors dated by an autoAck before everything else, then moved by the other kinds of ack to
    // the newest completed messages of all: a date left behind would leave those off the page
    for (int kind = 0; kind < 3; kind++) {
      wire.pushNumbered("done", "late" + kind, 0, 1);
      assertThat(wire.popPartition("done", "late" + kind, "batch=1&autoAck=true").status())
          .isEqualTo(200);
    }
    int[] next = new int[40];
    for (int round = 0; round < 3; round++) {
      for (int i : shuffled(next.length, random)) {
        int count = 1 + random.nextInt(3);
        wire.pushNumbered("done", "p" + i, next[i], count);
        next[i] += count;
      }
    }
    // queue mode reads p0-p19, group g p10-p39, and group h p30-p39 too; each to its own depth, in
    // shuffled order, by every kind of ack
    for (int i : shuffled(next.length, random)) {
      int depth = random.nextInt(next[i] + 1);
      if (i < 10) {
        consume("p" + i, "", depth, random.nextInt(3));
      } else if (i < 20) {
        // queue mode decides where a group reads too: g behind it on p10-p14, past it on p15-p19
        int queueMode = 1 + random.nextInt(next[i] - 1);
        consume("p" + i, "", queueMode, random.nextInt(3));
        int g =
            i < 15
                ? random.nextInt(queueMode)
                : queueMode + 1 + random.nextInt(next[i] - queueMode);
        consume("p" + i, "&consumerGroup=g", g, random.nextInt(3));
      } else {
        consume("p" + i, "&consumerGroup=g", depth, random.nextInt(3));
        if (i >= 30) {
          // the slower of g and h decides; on p30-p31 they stand at the same offset
          int h = i < 32 ? depth : random.nextInt(next[i] + 1);
          consume("p" + i, "&consumerGroup=h", h, random.nextInt(3));
        }
      }
    }
    for (int kind = 0; kind < 3; kind++) {
      wire.pushNumbered("done", "late" + kind, 1, 2);
      consume("late" + kind, "", 2, kind);
    }
    for (int i : shuffled(next.length, random)) {
      wire.pushNumbered("done", "p" + i, next[i]++, 1);
    }

    JsonNode all = broker.get("/api/v1/messages?queue=done&limit=1000").json().get("messages");
    List<String> expected = Wire.withStatus(all, "completed");
    assertThat(expected.size()).isBetween(30, all.size() - 40);
    assertThat(expected.subList(0, 6))
        .containsExactly(
            "done-late2-2",
            "done-late2-1",
            "done-late1-2",
            "done-late1-1",
            "done-late0-2",
            "done-late0-1");
    assertCompletedPages(expected);

    // undated cursors (moved last before V17, or at a group's first contact) count as written at
    // their partition's newest write: read earlier, never too late. First the slowest group's date
    // unknown beside a known faster one (and on p30-p31 one of two cursors at one offset), then
    // every date, as right after the upgrade
    broker.sql("update queen.log_consumers set committed_at = null where consumer_group = 'h'");
    assertCompletedPages(expected);
    broker.sql("update queen.log_consumers set committed_at = null");
    assertCompletedPages(expected);
  }

  // 60 partitions each written once a round, for ten rounds: every partition holds messages of
  // the page's whole span, its first 16 read 4 deep date it weakly, and its later partitions hold
  // the rest of it. A page takes them at most 16 then 64 a round, and must miss none of them
  @Test
  void pagesSpanningMorePartitionsThanARoundTakesMissNone() {
    for (int round = 0; round < 10; round++) {
      for (int i = 0; i < 60; i++) {
        wire.pushNumbered("span", "w" + i, round, 1);
        wire.pushNumbered("waiting", "w" + i, round, 1);
      }
    }
    for (int i = 0; i < 60; i++) {
      assertThat(wire.popPartition("span", "w" + i, "batch=10&autoAck=true").status())
          .isEqualTo(200);
    }
    // every message completed (or pending), newest first: round 9 from w59 down, then round 8
    List<String> completed = new ArrayList<>();
    List<String> pending = new ArrayList<>();
    for (int round = 9; round >= 0; round--) {
      for (int i = 59; i >= 0; i--) {
        completed.add("span-w" + i + "-" + round);
        pending.add("waiting-w" + i + "-" + round);
      }
    }
    for (String[] page : new String[][] {{"50", "0"}, {"40", "30"}, {"100", "0"}, {"20", "90"}}) {
      int limit = Integer.parseInt(page[0]);
      int offset = Integer.parseInt(page[1]);
      String query = "&limit=" + limit + "&offset=" + offset;
      assertThat(wire.messageIds("/api/v1/messages?queue=span&status=completed" + query))
          .isEqualTo(completed.subList(offset, offset + limit));
      assertThat(wire.messageIds("/api/v1/messages?queue=waiting&status=pending" + query))
          .isEqualTo(pending.subList(offset, offset + limit));
      assertThat(wire.messageIds("/api/v1/messages?queue=waiting" + query))
          .isEqualTo(pending.subList(offset, offset + limit));
    }
  }

  private void assertCompletedPages(List<String> expected) {
    assertThat(wire.messageIds("/api/v1/messages?queue=done&status=completed&limit=5"))
        .isEqualTo(expected.subList(0, 5));
    assertThat(wire.messageIds("/api/v1/messages?queue=done&status=completed&limit=10"))
        .isEqualTo(expected.subList(0, 10));
    assertThat(wire.messageIds("/api/v1/messages?queue=done&status=completed&limit=10&offset=15"))
        .isEqualTo(expected.subList(15, 25));
    assertThat(wire.messageIds("/api/v1/messages?queue=done&status=completed&limit=1000"))
        .isEqualTo(expected);
  }

  /**
   * Pops the partition's next {@code count} messages in one batch and acks them by one kind: 0
   * autoAck, 1 the whole batch in one call, 2 one message at a time.
   */
  private void consume(String partition, String group, int count, int kind) {
    if (count > 0) {
      String query = "batch=" + count + group;
      switch (kind) {
        case 0 ->
            assertThat(wire.popPartition("done", partition, query + "&autoAck=true").status())
                .isEqualTo(200);
        case 1 -> wire.ackAll(wire.popPartition("done", partition, query).json());
        default -> {
          JsonNode leased = wire.popPartition("done", partition, query).json();
          String lease = leased.get("messages").get(0).get("leaseId").asText();
          String consumerGroup = leased.get("consumerGroup").asText();
          for (JsonNode m : leased.get("messages")) {
            assertThat(wire.ackOne(m, lease, consumerGroup).status()).isEqualTo(200);
          }
        }
      }
    }
  }

  private static List<Integer> shuffled(int n, Random random) {
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      order.add(i);
    }
    Collections.shuffle(order, random);
    return order;
  }
}
