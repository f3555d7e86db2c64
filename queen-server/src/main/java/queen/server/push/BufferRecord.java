package queen.server.push;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * The body of one buffered push: {@code [u32 count][JSON array of items]}, every item with its
 * transactionId already assigned (so that draining it twice stores it once) and its payload as the
 * producer sent it ({@code payload}), or sealed when its queue encrypts ({@code sealed}, base64).
 */
final class BufferRecord {
  private static final ObjectMapper JSON = new ObjectMapper();

  private BufferRecord() {}

  static byte[] encode(List<PushItem> items, PayloadSealing sealing) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 + items.size() * 128);
    out.writeBytes(ByteBuffer.allocate(4).putInt(items.size()).array());
    try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
      g.writeStartArray();
      for (PushItem i : items) {
        g.writeStartObject();
        g.writeStringField("queue", i.queue());
        g.writeStringField("partition", i.partition());
        g.writeStringField("transactionId", i.transactionId());
        g.writeStringField("traceId", i.traceId() == null ? null : i.traceId().toString());
        g.writeStringField("producerSub", i.producerSub());
        byte[] sealed = sealing.sealedForBuffer(i);
        if (sealed != null) {
          g.writeBinaryField("sealed", sealed);
        } else {
          g.writeFieldName("payload");
          g.writeRawValue(new String(i.payload(), StandardCharsets.UTF_8));
        }
        g.writeEndObject();
      }
      g.writeEndArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  static int count(byte[] body) {
    return ByteBuffer.wrap(body, 0, 4).getInt();
  }

  static List<PushItem> decode(byte[] body, PayloadSealing sealing) {
    List<PushItem> items = new ArrayList<>(count(body));
    byte[] json = Arrays.copyOfRange(body, 4, body.length);
    try (JsonParser p = JSON.createParser(json)) {
      p.nextToken();
      while (p.nextToken() == JsonToken.START_OBJECT) {
        String queue = null;
        String partition = null;
        String txn = null;
        String trace = null;
        String sub = null;
        byte[] payload = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String field = p.currentName();
          JsonToken t = p.nextToken();
          String text = t == JsonToken.VALUE_STRING ? p.getText() : null;
          switch (field) {
            case "queue" -> queue = text;
            case "partition" -> partition = text;
            case "transactionId" -> txn = text;
            case "traceId" -> trace = text;
            case "producerSub" -> sub = text;
            case "payload" -> payload = RawJson.value(p, json);
            case "sealed" -> payload = sealing.openFromBuffer(p.getBinaryValue());
            default -> p.skipChildren();
          }
        }
        items.add(
            new PushItem(
                queue,
                partition,
                payload,
                txn,
                trace == null ? null : UUID.fromString(trace),
                sub));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return items;
  }
}
