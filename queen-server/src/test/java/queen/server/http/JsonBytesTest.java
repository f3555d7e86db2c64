package queen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class JsonBytesTest {

  @Test
  void aStringLiteralReadsBackAsTheString() throws Exception {
    for (int seed = 0; seed < 1000; seed++) {
      Random r = new Random(seed);
      StringBuilder b = new StringBuilder();
      int n = r.nextInt(40);
      for (int i = 0; i < n; i++) {
        switch (r.nextInt(5)) {
          case 0 -> b.append((char) r.nextInt(0x20)); // control characters
          case 1 -> b.append("\"\\/".charAt(r.nextInt(3)));
          case 2 -> b.appendCodePoint(0x80 + r.nextInt(0xD800 - 0x80));
          case 3 -> b.appendCodePoint(0x10000 + r.nextInt(0x10000));
          default -> b.append((char) (' ' + r.nextInt(95)));
        }
      }
      String s = b.toString();
      assertThat(Json.MAPPER.readTree(JsonBytes.literal(s)).asText())
          .as("seed %d", seed)
          .isEqualTo(s);
    }
  }

  @Test
  void aUuidLiteralIsTheQuotedCanonicalForm() {
    Random r = new Random(7);
    for (int i = 0; i < 1000; i++) {
      UUID u = new UUID(r.nextLong(), r.nextLong());
      assertThat(new String(JsonBytes.literal(u), StandardCharsets.US_ASCII))
          .isEqualTo("\"" + u + "\"");
    }
  }
}
