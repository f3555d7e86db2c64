package queen.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static queen.server.Wire.item;
import static queen.server.Wire.object;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import queen.server.Broker;
import queen.server.TestBroker;
import queen.server.Wire;

/**
 * The dashboard in headless Chromium against a broker holding real data: every page shows it, a
 * requeue and a seek made on the pages change what the API answers, and with JWT on the pages ask
 * for a token and hide what the token may not do.
 */
// the page tour runs first, so that its screenshots show the data before the actions change it
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardBrowserTest {
  @RegisterExtension static final TestBroker broker = new TestBroker();

  private static final String SECRET = "dashboard-test-secret-of-32-bytes-or-more";
  private static Browser browser;
  private static final List<String> dead = new ArrayList<>();

  @BeforeAll
  static void data() {
    Wire wire = new Wire(broker);
    wire.configure("orders", object().put("leaseTime", 60).put("retryLimit", 0));
    for (int p = 0; p < 4; p++) {
      wire.pushNumbered("orders", "customer-" + p, 0, 12);
    }
    wire.pushNumbered("invoices", "Default", 0, 3);
    // billing consumed customer-0 and dead-lettered two messages of customer-1
    wire.ackAll(popGroup("customer-0", "billing", 12));
    for (int i = 0; i < 2; i++) {
      JsonNode one = popGroup("customer-1", "billing", 1);
      wire.ackAll(one, "failed", "card declined for order " + i);
      JsonNode m = one.get("messages").get(0);
      dead.add(m.get("partitionId").asText() + "|" + m.get("transactionId").asText());
    }
    // analytics read one message and lags behind on everything else
    wire.ackAll(popGroup("customer-2", "analytics", 1));
    JsonNode traced = popGroup("customer-3", "audit", 1).get("messages").get(0);
    broker.post(
        "/api/v1/traces",
        object()
            .put("transactionId", traced.get("transactionId").asText())
            .put("partitionId", traced.get("partitionId").asText())
            .put("consumerGroup", "audit")
            .put("traceNames", "order-flow")
            .put("eventType", "info")
            .set("data", object().put("step", "checked stock")));
    broker.post(
        "/api/v1/push",
        Wire.items(List.of(item("orders", "customer-3", "late-order", object().put("n", 99)))));
    broker.post("/api/v1/stats/refresh", object());
    browser = Browser.start();
  }

  @AfterAll
  static void close() {
    if (browser != null) {
      browser.close();
    }
  }

  private static JsonNode popGroup(String partition, String group, int batch) {
    TestBroker.Reply r =
        broker.get(
            "/api/v1/pop/queue/orders/partition/"
                + partition
                + "?consumerGroup="
                + group
                + "&batch="
                + batch);
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    return r.json();
  }

  private static String url(String hash) {
    return broker.uri("/#/" + hash).toString();
  }

  @Test
  @Order(1)
  void everyPageShowsTheBrokersData() {
    browser.open(url("overview"), "overview");
    assertThat(browser.text("[data-testid=stat-oldest]")).contains("orders/customer-");
    browser.screenshot("overview");

    browser.open(url("queues"), "queues");
    browser.row("queues-table", "orders");
    assertThat(browser.text("[data-testid=queues-table] tr[data-key=invoices]")).contains("3");
    browser.screenshot("queues");

    browser.open(url("queues/orders"), "queue");
    browser.row("partitions-table", "customer-0");
    assertThat(browser.text("[data-page=queue]")).contains("billing").contains("analytics");
    // each group's lag per partition, all from one request
    assertThat(
            browser.text(
                "[data-testid=partitions-table] tr[data-key=customer-2]"
                    + " [data-testid=lag][data-group=analytics]"))
        .startsWith("11");
    assertThat(browser.text("[data-testid=partitions-pager]")).contains("1–5 of 5");
    browser.screenshot("queue");

    browser.open(url("groups"), "groups");
    assertThat(browser.row("groups-table", "analytics|orders").getText()).contains("analytics");
    browser.screenshot("groups");

    browser.open(url("dlq"), "dlq");
    // a dead letter's row is keyed by message and group: two groups may dead-letter one message
    assertThat(browser.rowStartingWith("dlq-table", dead.get(0) + "|").getText())
        .contains("card declined");
    browser.screenshot("dlq");

    browser.open(url("messages?queue=orders"), "messages");
    browser.row("messages-table", dead.get(0));
    browser.screenshot("messages");

    String[] key = dead.get(0).split("\\|");
    browser.open(url("messages/" + key[0] + "/" + key[1]), "message");
    assertThat(browser.text("[data-page=message]")).contains("billing");
    browser.screenshot("message");

    browser.resize(390, 844);
    try {
      browser.open(url("overview"), "overview");
      browser.screenshot("overview-phone");
      browser.open(url("queues"), "queues");
      browser.screenshot("queues-phone");
    } finally {
      browser.resize(1280, 800);
    }
    assertThat(browser.consoleErrors()).as("script errors and CSP violations").isEmpty();
  }

  // every request of a page was awaited together: one for a dropdown's choices or a column that
  // failed (a 503 of a read past its statement timeout) left the page blank
  @Test
  @Order(2)
  void aPageShowsItsListWhenTheRequestsBesideItFail() {
    broker.sql("alter function queen.consumer_groups_v1() rename to consumer_groups_v1_away");
    try {
      assertThat(broker.get("/api/v1/consumer-groups").status()).isGreaterThanOrEqualTo(500);
      // a document of its own: no answer kept from the other tests' pages
      browser.open(broker.uri("/?fresh=groups-away#/dlq").toString(), "dlq");
      browser.rowStartingWith("dlq-table", dead.get(0) + "|");
      browser.open(broker.uri("/?fresh=groups-away-too#/queues").toString(), "queues");
      browser.row("queues-table", "orders");
      assertThat(browser.displayed("[data-testid=stale]")).as("no refresh failed").isEmpty();
      // unknown, not "no group reads this queue"
      browser.open(broker.uri("/?fresh=groups-away-again#/queues/orders").toString(), "queue");
      browser.visible("[data-testid=groups-unknown]");
    } finally {
      broker.sql("alter function queen.consumer_groups_v1_away() rename to consumer_groups_v1");
    }
  }

  @Test
  void aRequeueOnTheDeadLetterPagePutsTheMessageBack() {
    String key = dead.get(1);
    browser.open(url("dlq"), "dlq");
    browser
        .rowStartingWith("dlq-table", key + "|")
        .findElement(By.cssSelector("[data-action=requeue]"))
        .click();
    browser.confirm();
    String[] ids = key.split("\\|");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              for (JsonNode m : broker.get("/api/v1/dlq?queue=orders").json().get("messages")) {
                if (m.get("transactionId").asText().equals(ids[1])) {
                  return false;
                }
              }
              return true;
            });
    List<String> redelivered = new ArrayList<>();
    for (JsonNode m : popGroup("customer-1", "billing", 100).get("messages")) {
      redelivered.add(m.get("transactionId").asText());
    }
    assertThat(redelivered.getLast())
        .as("appended to its partition again, under a transactionId of its own")
        .startsWith(ids[1] + ":requeued:");
  }

  // a page at a time, each read past the letters whose requeue failed: collecting every letter
  // first, the list's offset cap (100,000) failed the whole requeue past it
  @Test
  void requeueAllOnTheDeadLetterPageRequeuesEveryMatchingLetterOnce() {
    Wire wire = new Wire(broker);
    wire.pushNumbered("refunds", "r", 0, 3);
    JsonNode popped =
        broker.get("/api/v1/pop/queue/refunds/partition/r?consumerGroup=billing&batch=3").json();
    wire.ackAll(popped, "dlq", "refund declined");
    List<String> ids = new ArrayList<>();
    popped.get("messages").forEach(m -> ids.add(m.get("transactionId").asText()));
    assertThat(ids).hasSize(3);
    browser.open(url("dlq?queue=refunds"), "dlq");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> browser.text("[data-action=requeue-all]").contains("3"));
    browser.click("[data-action=requeue-all]");
    browser.confirm();
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> broker.get("/api/v1/dlq?queue=refunds").json().get("total").asInt() == 0);
    List<String> again = new ArrayList<>();
    JsonNode back =
        broker.get("/api/v1/pop/queue/refunds/partition/r?consumerGroup=billing&batch=10").json();
    for (JsonNode m : back.get("messages")) {
      again.add(m.get("transactionId").asText().replaceAll(":requeued:.*", ""));
    }
    assertThat(again).as("each once").containsExactlyInAnyOrderElementsOf(ids);
  }

  @Test
  void aSeekToTheEndOnTheGroupsPageClearsTheLagShown() {
    browser.open(url("groups"), "groups");
    WebElement row = browser.row("groups-table", "analytics|orders");
    assertThat(lag(row)).isPositive();
    row.findElement(By.cssSelector("[data-action=seek-end]")).click();
    browser.confirm();
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> lag(browser.row("groups-table", "analytics|orders")) == 0);
  }

  private static long lag(WebElement row) {
    return Long.parseLong(
        row.findElement(By.cssSelector("[data-testid=lag]")).getText().replaceAll("[^0-9]", ""));
  }

  @Test
  void withAuthOnThePagesAskForATokenAndHideWhatItMayNotDo() {
    try (Broker secured =
        broker.startAnother(Map.of("JWT_ENABLED", "true", "JWT_SECRET", SECRET))) {
      String base = "http://127.0.0.1:" + secured.port() + "/#/groups";
      browser.clearSession();
      browser.get(base);
      WebElement dialog = browser.visible("[data-testid=token-dialog]");
      browser.screenshot("token-prompt");
      dialog.findElement(By.cssSelector("[data-testid=token-input]")).sendKeys(token("read-only"));
      dialog.findElement(By.cssSelector("[data-testid=token-submit]")).click();
      browser.loaded("groups");
      browser.row("groups-table", "billing|orders");
      assertThat(browser.displayed("[data-action=seek-end]")).as("read-only: no seek").isEmpty();
      assertThat(browser.displayed("[data-action=delete-group]")).isEmpty();

      browser.clearSession();
      browser.get(base);
      browser
          .visible("[data-testid=token-dialog]")
          .findElement(By.cssSelector("[data-testid=token-input]"))
          .sendKeys(token("admin"));
      browser.click("[data-testid=token-submit]");
      browser.loaded("groups");
      browser.row("groups-table", "billing|orders");
      assertThat(browser.displayed("[data-action=delete-group]")).isNotEmpty();
    } finally {
      browser.clearSession();
    }
  }

  private static String token(String role) {
    try {
      com.nimbusds.jwt.SignedJWT jwt =
          new com.nimbusds.jwt.SignedJWT(
              new com.nimbusds.jose.JWSHeader(com.nimbusds.jose.JWSAlgorithm.HS256),
              new com.nimbusds.jwt.JWTClaimsSet.Builder()
                  .subject("dashboard-user")
                  .claim("role", role)
                  .expirationTime(new java.util.Date(System.currentTimeMillis() + 600_000))
                  .build());
      jwt.sign(new com.nimbusds.jose.crypto.MACSigner(SECRET.getBytes()));
      return jwt.serialize();
    } catch (com.nimbusds.jose.JOSEException e) {
      throw new IllegalStateException(e);
    }
  }
}
