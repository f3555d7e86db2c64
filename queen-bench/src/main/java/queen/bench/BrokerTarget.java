package queen.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The broker, driven over HTTP/JSON exactly as Queen's clients drive it. Requests are written and
 * answers read with Jackson's streaming API so that the load generator, which shares the machine,
 * spends as little CPU as it can.
 */
final class BrokerTarget implements Target {
  private static final JsonFactory JSON = new JsonFactory();

  private final Http1 http;

  private final String options;

  BrokerTarget(String url) {
    this(url, false);
  }

  /** {@code encrypted}: the queues it prepares seal their payloads at rest. */
  BrokerTarget(String url, boolean encrypted) {
    this.http = new Http1(url);
    this.options =
        encrypted ? "{\"leaseTime\":60,\"encryptionEnabled\":true}" : "{\"leaseTime\":60}";
  }

  @Override
  public String name() {
    return "broker";
  }

  @Override
  public void prepare(String queue, int partitions) throws Exception {
    configure(queue, options);
  }

  /** Creates or replaces the queue with these options (a JSON object). */
  void configure(String queue, String options) throws Exception {
    post("/api/v1/configure", "{\"queue\":\"" + queue + "\",\"options\":" + options + "}");
  }

  /** Creates or replaces the queue in a namespace, with this target's options. */
  void configureIn(String queue, String namespace) throws Exception {
    post(
        "/api/v1/configure",
        "{\"queue\":\""
            + queue
            + "\",\"namespace\":\""
            + namespace
            + "\",\"options\":"
            + options
            + "}");
  }

  @Override
  public void push(String queue, List<Message> batch) throws Exception {
    StringBuilder b = new StringBuilder(64 + batch.size() * 128).append("{\"items\":[");
    for (int i = 0; i < batch.size(); i++) {
      Message m = batch.get(i);
      if (i > 0) {
        b.append(',');
      }
      b.append("{\"queue\":\"").append(queue).append("\",\"partition\":\"").append(m.partition());
      b.append("\",\"transactionId\":\"").append(m.id()).append("\",\"payload\":");
      b.append(new String(m.payload(), StandardCharsets.US_ASCII)).append('}');
    }
    post("/api/v1/push", b.append("]}").toString());
  }

  @Override
  public Delivery pop(String queue, String group, int batch, boolean autoAck, long waitMillis)
      throws Exception {
    return popAt("/api/v1/pop/queue/" + queue + "?", group, batch, autoAck, waitMillis);
  }

  /** A discovery pop: any queue of the namespace (see {@link #configureIn}). */
  Delivery popNamespace(String namespace, String group, int batch, long waitMillis)
      throws Exception {
    return popAt("/api/v1/pop?namespace=" + namespace + "&", group, batch, false, waitMillis);
  }

  /** {@code route} ends with "?" or "&", where the pop's parameters go. */
  private Delivery popAt(String route, String group, int batch, boolean autoAck, long waitMillis)
      throws Exception {
    String path =
        route
            + "batch="
            + batch
            + "&consumerGroup="
            + URLEncoder.encode(group, StandardCharsets.UTF_8)
            + (autoAck ? "&autoAck=true" : "")
            + (waitMillis > 0 ? "&wait=true&timeout=" + waitMillis : "");
    Http1.Response r = http.get(path, (int) waitMillis);
    if (r.status() == 204) {
      return null;
    }
    if (r.status() != 200) {
      throw new IOException("pop answered " + r.status() + ": " + r.text());
    }
    return parse(group, r.body());
  }

  @Override
  public void ack(Delivery d) throws Exception {
    String answer = ackAnswer(d);
    if (answer.contains("\"success\":false")) {
      throw new IOException("an ack failed: " + answer);
    }
  }

  /** Acknowledges a whole delivery; the transactionIds the broker answered success for. */
  List<String> acked(Delivery d) throws Exception {
    List<String> ids = new ArrayList<>();
    try (JsonParser p = JSON.createParser(ackAnswer(d))) {
      p.nextToken();
      while (p.nextToken() == JsonToken.START_OBJECT) {
        String id = null;
        boolean success = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String field = p.currentName();
          p.nextToken();
          switch (field) {
            case "transactionId" -> id = p.getText();
            case "success" -> success = p.getBooleanValue();
            default -> p.skipChildren();
          }
        }
        if (success) {
          ids.add(id);
        }
      }
    }
    return ids;
  }

  private String ackAnswer(Delivery d) throws Exception {
    String lease = (String) d.ackHandle();
    StringBuilder b = new StringBuilder(64 + d.size() * 128);
    b.append("{\"consumerGroup\":\"").append(d.group()).append("\",\"acknowledgments\":[");
    for (int i = 0; i < d.size(); i++) {
      Delivered m = d.messages().get(i);
      if (i > 0) {
        b.append(',');
      }
      b.append("{\"transactionId\":\"").append(m.id()).append("\",\"partitionId\":\"");
      b.append(m.partitionId()).append("\",\"leaseId\":\"").append(lease).append("\"}");
    }
    return post("/api/v1/ack/batch", b.append("]}").toString());
  }

  private String post(String path, String body) throws Exception {
    Http1.Response r = http.post(path, body.getBytes(StandardCharsets.UTF_8));
    if (r.status() >= 300) {
      throw new IOException(path + " answered " + r.status() + ": " + r.text());
    }
    return r.text();
  }

  /** Reads the lease and, per message, transactionId, partitionId and data.t. */
  private static Delivery parse(String group, byte[] body) throws IOException {
    List<Delivered> out = new ArrayList<>();
    String lease = "";
    try (JsonParser p = JSON.createParser(body)) {
      p.nextToken();
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        p.nextToken();
        if (field.equals("leaseId")) {
          lease = p.getText();
        } else if (field.equals("messages")) {
          while (p.nextToken() == JsonToken.START_OBJECT) {
            out.add(message(p));
          }
        } else {
          p.skipChildren();
        }
      }
    }
    return new Delivery(group, out, lease);
  }

  private static Delivered message(JsonParser p) throws IOException {
    String id = null;
    String partition = null;
    long sent = 0;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken t = p.nextToken();
      switch (field) {
        case "transactionId" -> id = p.getText();
        case "partitionId" -> partition = p.getText();
        case "data" -> {
          if (t == JsonToken.START_OBJECT) {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String inner = p.currentName();
              p.nextToken();
              if (inner.equals("t")) {
                sent = p.getLongValue();
              } else {
                p.skipChildren();
              }
            }
          }
        }
        default -> p.skipChildren();
      }
    }
    return new Delivered(id, partition, sent);
  }

  /** The broker's own count of database calls (its queen_db_calls_total metric). */
  long dbCalls() throws IOException {
    for (String line : http.get("/metrics/prometheus", 5_000).text().split("\n")) {
      if (line.startsWith("queen_db_calls_total")) {
        return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  @Override
  public void close() {
    http.close();
  }
}
