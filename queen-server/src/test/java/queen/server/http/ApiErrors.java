package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import queen.server.TestBroker;

/** Assertions on the JSON errors of WIRE.md: a status and an {@code error} naming the problem. */
final class ApiErrors {
  private ApiErrors() {}

  static void assertError(TestBroker.Reply r, int status, String error) {
    assertThat(r.status()).as(r.text()).isEqualTo(status);
    assertThat(r.json().get("error").asText()).isEqualTo(error);
  }
}
