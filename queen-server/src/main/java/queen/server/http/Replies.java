package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;

/** Writes responses in the wire contract's shapes. */
final class Replies {
  private Replies() {}

  static void json(ServerResponse res, int status, JsonNode body) {
    json(res, status, Json.bytes(body));
  }

  static void json(ServerResponse res, int status, byte[] body) {
    res.status(Status.create(status));
    res.header(HeaderNames.CONTENT_TYPE, "application/json");
    res.send(body);
  }

  static void error(ServerResponse res, int status, String message) {
    json(res, status, Json.object().put("error", message));
  }

  /**
   * 204 with no body and no content length: announcing a length on an elided body poisoned
   * Node/undici connections into reset storms under empty-poll load.
   */
  static void noContent(ServerResponse res) {
    res.status(Status.NO_CONTENT_204);
    res.send();
  }
}
