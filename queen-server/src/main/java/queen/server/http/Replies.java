package queen.server.http;

import com.fasterxml.jackson.databind.JsonNode;

/** Writes responses in the wire contract's shapes. */
final class Replies {
  private Replies() {}

  static void json(Response res, int status, JsonNode body) {
    json(res, status, Json.bytes(body));
  }

  static void json(Response res, int status, byte[] body) {
    res.status(status).header("Content-Type", "application/json").send(body);
  }

  static void error(Response res, int status, String message) {
    json(res, status, Json.object().put("error", message));
  }

  /**
   * 204 with no body and no content length: announcing a length on an elided body poisoned
   * Node/undici connections into reset storms under empty-poll load.
   */
  static void noContent(Response res) {
    res.status(204).send();
  }
}
