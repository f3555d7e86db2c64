package queen.server.push;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.ObjectCodec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A payload as JSON bytes, taken from the parser standing on it: objects and arrays verbatim from
 * the input (payloads are opaque to the broker and pushes are its hottest path), numbers as their
 * text (2.50 stays 2.50, 1e400 stays 1e400), strings and booleans written again through the
 * parser's codec.
 */
public final class RawJson {
  private static final byte[] NULL = "null".getBytes(StandardCharsets.UTF_8);

  private RawJson() {}

  public static byte[] value(JsonParser p, byte[] source) throws IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
      int start = (int) p.currentTokenLocation().getByteOffset();
      p.skipChildren();
      return Arrays.copyOfRange(source, start, (int) p.currentLocation().getByteOffset());
    }
    if (t == JsonToken.VALUE_NULL) {
      return NULL;
    }
    if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
      return p.getText().getBytes(StandardCharsets.US_ASCII);
    }
    ObjectCodec codec = p.getCodec();
    ByteArrayOutputStream out = new ByteArrayOutputStream(32);
    try (JsonGenerator g = codec.getFactory().createGenerator(out)) {
      codec.writeTree(g, p.readValueAsTree());
    }
    return out.toByteArray();
  }
}
