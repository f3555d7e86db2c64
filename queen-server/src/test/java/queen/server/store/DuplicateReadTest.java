package queen.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * A push retried whole after its answer was lost (a timeout, a 503 that had committed, a buffer
 * file drained again after a restart) finds every message stored, reading each stored segment once:
 * read once per duplicate, 1,000 duplicates in a 2 MB segment made PostgreSQL return 2 GB, spilled
 * to temporary files, and the broker load and decode it all.
 */
class DuplicateReadTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  @Test
  void aBigPushRetriedWholeReadsEachStoredSegmentOnce() throws Exception {
    Random random = new Random(7);
    List<ObjectNode> items = new ArrayList<>();
    List<String> txns = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      StringBuilder noise = new StringBuilder(2_048);
      for (int k = 0; k < 2_048; k++) {
        noise.append((char) ('!' + random.nextInt(90)));
      }
      txns.add("t-" + i);
      items.add(Wire.item("retried", "p", "t-" + i, Wire.object().put("noise", noise.toString())));
    }
    String body = Wire.items(items).toString();
    assertThat(broker.post("/api/v1/push", body).status()).isEqualTo(201);

    TestBroker.Reply again = broker.post("/api/v1/push", body);
    assertThat(again.status()).isEqualTo(200);
    for (JsonNode a : again.json()) {
      assertThat(a.get("status").asText()).isEqualTo("duplicate");
    }

    UUID partition =
        UUID.fromString(broker.sqlText("select id from queen.log_partitions where name = 'p'"));
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    try (Connection c = broker.connect()) {
      long before = threads.getCurrentThreadAllocatedBytes();
      List<TxnCandidates.Match> matches =
          TxnCandidates.read(c, Collections.nCopies(txns.size(), partition), txns);
      long allocated = threads.getCurrentThreadAllocatedBytes() - before;
      assertThat(matches).hasSize(1_000).allMatch(TxnCandidates.Match::same);
      // the 2 MB segment received and decoded once; once per candidate it was 2 GB
      assertThat(allocated).as("bytes allocated by the read").isLessThan(200L << 20);
    }
  }
}
