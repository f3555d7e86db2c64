package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import queen.server.BrokerConfig;
import queen.server.TestBroker;
import queen.server.http.auth.AuthSettings;
import queen.server.http.auth.Tokens;

/**
 * A JWT_SKIP_PATHS prefix applies to every method of what it matches: the routes it opens that need
 * read-write or admin access are named at start, and only those.
 */
class SkipPathsTest {
  @RegisterExtension
  static final TestBroker broker =
      new TestBroker(
          Map.of(
              "JWT_ENABLED", "true",
              "JWT_SECRET", Tokens.SECRET,
              "JWT_SKIP_PATHS", "/health,/api/v1/resources/*,/api/v1/consumer-groups/g/queues/q"));

  @Test
  void theWritesAPrefixOpensAreNamedAndItsReadsAreNot() {
    List<String> opened = Gate.of(broker.config().auth()).openedBySkipPaths(broker.routes());
    assertThat(opened)
        .as("the exact skip path opens the delete of group g on queue q too")
        .contains("DELETE /api/v1/consumer-groups/{group}/queues/{queue}")
        .filteredOn(r -> !r.startsWith("DELETE /api/v1/consumer-groups/"))
        .isNotEmpty()
        .allMatch(r -> r.startsWith("DELETE /api/v1/resources/"))
        .anyMatch(r -> r.startsWith("DELETE /api/v1/resources/queues/"));
    assertThat(broker.delete("/api/v1/resources/queues/skip-opened").status())
        .as("what the warning is about: served without a token")
        .isEqualTo(200);
  }

  @Test
  void aNameHoldingASlashDoesNotMakeASkipPath() {
    assertThat(broker.delete("/api/v1/consumer-groups/g/queues/q").status())
        .as("the skip path itself: served without a token, its queue unknown")
        .isEqualTo(404);
    TestBroker.Reply group = broker.delete("/api/v1/consumer-groups/g%2Fqueues%2Fq");
    assertThat(group.status())
        .as("the delete of the group named g/queues/q, whose decoded path is the skip path")
        .isEqualTo(401);
  }

  @Test
  void aSkipPathOfTheRootOrNotAPathOpensNothingElse() {
    assertThat(settings("//*").skips(List.of("api", "v1", "resources", "queues", "q")))
        .as("'//*' opens paths whose first segment is empty, as the prefix '//' did")
        .isFalse();
    assertThat(settings("/*").skips(List.of())).as("'/*' opens '/' as well").isTrue();
    assertThat(settings("/api/*").skips(List.of("api"))).isFalse();
    assertThat(settings("/api/*").skips(List.of("api", ""))).isTrue();
    assertThat(settings("/api/v1/resources/queues/orders").skipsSome("/api/v1/resources/*"))
        .isTrue();
    assertThat(settings("/api/v1/resources/queues/orders").skipsSome("/api/v1/resources/queues"))
        .isFalse();
    assertThat(settings("/api/v1/resources/queues/").skipsSome("/api/v1/resources/queues/{q}"))
        .as("an empty segment is no name")
        .isFalse();
    assertThat(settings("/api/*").skipsSome("/api/v1/resources/queues/{queue}")).isTrue();
    assertThat(settings("/api/v1/x").skipsSome("/api/*")).isTrue();
    assertThat(settings("/api").skipsSome("/api/*")).isFalse();
    assertThat(BrokerConfig.fromEnv(Map.of("JWT_SKIP_PATHS", "health")).auth().skipPaths())
        .as("auth off: a stale setting does not stop the broker")
        .containsExactly("health");
    assertThatThrownBy(
            () ->
                BrokerConfig.fromEnv(
                    Map.of(
                        "JWT_SKIP_PATHS",
                        "/health,health",
                        "JWT_ENABLED",
                        "true",
                        "JWT_SECRET",
                        Tokens.SECRET)))
        .isInstanceOf(BrokerConfig.InvalidConfigException.class)
        .hasMessageContaining("\"health\" is not a path");
  }

  private static AuthSettings settings(String skipPaths) {
    return BrokerConfig.fromEnv(Map.of("JWT_SKIP_PATHS", skipPaths)).auth();
  }
}
