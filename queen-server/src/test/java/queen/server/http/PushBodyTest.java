package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import queen.server.push.PushItem;

class PushBodyTest {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  @Test
  void aPayloadIsStoredAsTheSameJsonItWasSentAs() throws Exception {
    for (int seed = 0; seed < 300; seed++) {
      Random r = new Random(seed);
      JsonNode payload = json(r, 3);
      ObjectNode item = F.objectNode().put("queue", "q");
      item.set("payload", payload);
      ObjectNode body = F.objectNode();
      body.putArray("items").add(item).add(F.objectNode().put("queue", "q2"));
      String text =
          r.nextBoolean()
              ? Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(body)
              : body.toString();
      List<PushItem> items =
          PushBody.read(text.getBytes(StandardCharsets.UTF_8), null, PushLimits.DEFAULT);
      assertThat(Json.MAPPER.readTree(items.get(0).payload()))
          .as("seed %d", seed)
          .isEqualTo(Json.MAPPER.readTree(payload.toString()));
      assertThat(new String(items.get(1).payload(), StandardCharsets.UTF_8)).isEqualTo("{}");
    }
  }

  @Test
  void anExplicitNullPayloadIsKept() {
    List<PushItem> items =
        PushBody.read(
            "{\"items\":[{\"queue\":\"q\",\"payload\":null}]}".getBytes(),
            null,
            PushLimits.DEFAULT);
    assertThat(new String(items.getFirst().payload(), StandardCharsets.UTF_8)).isEqualTo("null");
  }

  @Test
  void trailingContentIsRefused() {
    assertThatThrownBy(
            () -> PushBody.read("{\"items\":[]} []".getBytes(), null, PushLimits.DEFAULT))
        .isInstanceOf(ApiException.class);
  }

  /** Nested arrays and objects of strings, integers, doubles, booleans and nulls. */
  private static JsonNode json(Random r, int depth) {
    int kind = depth == 0 ? r.nextInt(4) : r.nextInt(6);
    switch (kind) {
      case 0 -> {
        StringBuilder b = new StringBuilder();
        for (int i = r.nextInt(20); i > 0; i--) {
          b.appendCodePoint(r.nextInt(4) == 0 ? 0xA0 + r.nextInt(0x3000) : ' ' + r.nextInt(95));
        }
        return F.textNode(b.toString());
      }
      case 1 -> {
        return F.numberNode(r.nextInt());
      }
      case 2 -> {
        return F.numberNode(r.nextDouble() * Math.pow(10, r.nextInt(20) - 10));
      }
      case 3 -> {
        return switch (r.nextInt(3)) {
          case 0 -> F.booleanNode(true);
          case 1 -> F.booleanNode(false);
          default -> F.nullNode();
        };
      }
      case 4 -> {
        ArrayNode a = F.arrayNode();
        for (int i = r.nextInt(5); i > 0; i--) {
          a.add(json(r, depth - 1));
        }
        return a;
      }
      default -> {
        ObjectNode o = F.objectNode();
        for (int i = r.nextInt(5); i > 0; i--) {
          o.set("k" + r.nextInt(100), json(r, depth - 1));
        }
        return o;
      }
    }
  }
}
