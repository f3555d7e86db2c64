package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import queen.server.push.PushItem;

class PushBodyTest {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  @Property(tries = 300)
  void aPayloadIsStoredAsTheSameJsonItWasSentAs(
      @ForAll("payloads") JsonNode payload, @ForAll boolean pretty) throws Exception {
    ObjectNode item = F.objectNode().put("queue", "q");
    item.set("payload", payload);
    ObjectNode body = F.objectNode();
    body.putArray("items").add(item).add(F.objectNode().put("queue", "q2"));
    String text =
        pretty
            ? Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(body)
            : body.toString();
    List<PushItem> items = PushBody.read(text.getBytes(StandardCharsets.UTF_8));
    assertThat(Json.MAPPER.readTree(items.get(0).payload())).isEqualTo(payload);
    assertThat(new String(items.get(1).payload(), StandardCharsets.UTF_8)).isEqualTo("{}");
  }

  @Example
  void anExplicitNullPayloadIsKept() {
    List<PushItem> items =
        PushBody.read("{\"items\":[{\"queue\":\"q\",\"payload\":null}]}".getBytes());
    assertThat(new String(items.getFirst().payload(), StandardCharsets.UTF_8)).isEqualTo("null");
  }

  @Example
  void trailingContentIsRefused() {
    assertThatThrownBy(() -> PushBody.read("{\"items\":[]} []".getBytes()))
        .isInstanceOf(ApiException.class);
  }

  @Provide
  Arbitrary<JsonNode> payloads() {
    return json(3);
  }

  private static Arbitrary<JsonNode> json(int depth) {
    Arbitrary<JsonNode> scalars =
        Arbitraries.oneOf(
            Arbitraries.strings().ofMaxLength(20).map(F::textNode),
            Arbitraries.integers().map(F::numberNode),
            Arbitraries.doubles().map(F::numberNode),
            Arbitraries.of(F.booleanNode(true), F.booleanNode(false), F.nullNode()));
    if (depth == 0) {
      return scalars;
    }
    Arbitrary<JsonNode> arrays =
        json(depth - 1)
            .list()
            .ofMaxSize(4)
            .map(
                l -> {
                  ArrayNode a = F.arrayNode();
                  l.forEach(a::add);
                  return a;
                });
    Arbitrary<JsonNode> objects =
        Arbitraries.maps(Arbitraries.strings().alpha().ofMaxLength(6), json(depth - 1))
            .ofMaxSize(4)
            .map(
                m -> {
                  ObjectNode o = F.objectNode();
                  m.forEach(o::set);
                  return o;
                });
    return Arbitraries.oneOf(scalars, arrays, objects);
  }
}
