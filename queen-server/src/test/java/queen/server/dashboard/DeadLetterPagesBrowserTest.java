package queen.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The dead-letter page when the broker's byte budget (QUEEN_POP_MAX_BYTES) ends its pages early:
 * "next" goes on from what a page showed and "back" returns to the page before, so no letter is
 * skipped or shown twice.
 */
class DeadLetterPagesBrowserTest {
  // two letters of 1.5 kB cross 2 kB: five letters make pages of 2, 2 and 1
  @RegisterExtension
  static final TestBroker broker = new TestBroker(Map.of("QUEEN_POP_MAX_BYTES", "2048"));

  private static Browser browser;

  @BeforeAll
  static void data() {
    Wire wire = new Wire(broker);
    wire.configure("bulky", object().put("retryLimit", 0));
    List<ObjectNode> items = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      items.add(item("bulky", "Default", "bulky-" + i, object().put("pad", "x".repeat(1_500))));
    }
    assertThat(broker.post("/api/v1/push", Wire.items(items)).status()).isEqualTo(201);
    for (int failed = 0; failed < 5; ) { // a pop ends at the budget too
      JsonNode popped = wire.popPartition("bulky", "Default", "batch=10").json();
      wire.ackAll(popped, "failed", "too big");
      failed += popped.get("messages").size();
    }
    browser = Browser.start();
  }

  @AfterAll
  static void close() {
    if (browser != null) {
      browser.close();
    }
  }

  @Test
  void pagesCutShortByTheByteBudgetFollowOnBothWays() {
    browser.open(broker.uri("/#/dlq?queue=bulky").toString(), "dlq");
    pagerShows("1–2 of 5");
    browser.click("[data-testid=dlq-pager-next]");
    pagerShows("3–4 of 5");
    browser.click("[data-testid=dlq-pager-next]");
    pagerShows("5–5 of 5");
    browser.click("[data-testid=dlq-pager-prev]");
    pagerShows("3–4 of 5");
    assertThat(browser.consoleErrors()).as("script errors and CSP violations").isEmpty();
  }

  private static void pagerShows(String range) {
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> browser.text("[data-testid=dlq-pager]").contains(range));
  }
}
