package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

class JsonBytesTest {

  @Property
  void aStringLiteralReadsBackAsTheString(@ForAll String s) throws Exception {
    assertThat(Json.MAPPER.readTree(JsonBytes.literal(s)).asText()).isEqualTo(s);
  }

  @Property
  void aUuidLiteralIsTheQuotedCanonicalForm(@ForAll long msb, @ForAll long lsb) {
    UUID u = new UUID(msb, lsb);
    assertThat(new String(JsonBytes.literal(u), StandardCharsets.US_ASCII))
        .isEqualTo("\"" + u + "\"");
  }
}
