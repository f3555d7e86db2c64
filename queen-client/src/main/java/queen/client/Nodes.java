package queen.client;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The broker URLs and which of them is healthy. A URL that failed (5xx or no connection) is left
 * out for {@code retryAfterNanos}, then tried again; if every URL is unhealthy, one is tried
 * anyway. Affinity uses consistent hashing (FNV-1a 32-bit over {@code "<url>#vnode<i>"}, as Queen's
 * JavaScript client does), so a key maps to the same broker across clients.
 */
final class Nodes {
  private final List<String> urls;
  private final LoadBalancing strategy;
  private final long retryAfterNanos;
  private final TreeMap<Long, String> ring = new TreeMap<>();
  private final Map<String, Long> unhealthyUntil = new ConcurrentHashMap<>();

  /** The most keys {@link LoadBalancing#SESSION} remembers a broker for (about 10 MB). */
  static final int MAX_SESSIONS = 100_000;

  private final Map<String, String> sessions = new ConcurrentHashMap<>();
  private final AtomicInteger next = new AtomicInteger();

  Nodes(List<String> urls, LoadBalancing strategy, int virtualNodes, long retryAfterNanos) {
    this.urls = List.copyOf(urls);
    this.strategy = strategy;
    this.retryAfterNanos = retryAfterNanos;
    for (String url : urls) {
      for (int i = 0; i < virtualNodes; i++) {
        ring.put(fnv1a(url + "#vnode" + i), url);
      }
    }
  }

  /** The next healthy URL in turn, from one reading of which are healthy. */
  private String nextHealthy() {
    List<String> healthy = healthy();
    return healthy.get(Math.floorMod(next.getAndIncrement(), healthy.size()));
  }

  /** The URLs to try for a request with this key, the preferred one first, each once. */
  List<String> order(String key) {
    String first =
        switch (strategy) {
          case AFFINITY -> onRing(key);
          case ROUND_ROBIN -> nextHealthy();
          case SESSION -> {
            if (sessions.size() >= MAX_SESSIONS && !sessions.containsKey(key)) {
              // a key per partition ever used (one per customer, say) grew it for good: one key
              // makes room, and only picks a broker again if it comes back
              sessions.keySet().stream().findAny().ifPresent(sessions::remove);
            }
            yield sessions.compute(key, (k, v) -> v != null && isHealthy(v) ? v : nextHealthy());
          }
        };
    List<String> out = new ArrayList<>(urls.size());
    out.add(first);
    for (String u : healthy()) {
      if (!out.contains(u)) {
        out.add(u);
      }
    }
    for (String u : urls) {
      if (!out.contains(u)) {
        out.add(u);
      }
    }
    return out;
  }

  void failed(String url) {
    if (urls.size() > 1) {
      unhealthyUntil.put(url, System.nanoTime() + retryAfterNanos);
    }
  }

  void succeeded(String url) {
    unhealthyUntil.remove(url);
  }

  int size() {
    return urls.size();
  }

  /** How many keys {@link LoadBalancing#SESSION} remembers a broker for. */
  int sessions() {
    return sessions.size();
  }

  private boolean isHealthy(String url) {
    Long until = unhealthyUntil.get(url);
    return until == null || System.nanoTime() - until >= 0;
  }

  private List<String> healthy() {
    List<String> h = urls.stream().filter(this::isHealthy).toList();
    return h.isEmpty() ? urls : h;
  }

  private String onRing(String key) {
    long hash = fnv1a(key);
    for (var e : ring.tailMap(hash, true).entrySet()) {
      if (isHealthy(e.getValue())) {
        return e.getValue();
      }
    }
    for (var e : ring.entrySet()) {
      if (isHealthy(e.getValue())) {
        return e.getValue();
      }
    }
    return urls.getFirst();
  }

  /** FNV-1a, 32 bits, unsigned. */
  static long fnv1a(String s) {
    long hash = 2166136261L;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      hash ^= (b & 0xff);
      hash = (hash * 16777619L) & 0xffffffffL;
    }
    return hash;
  }
}
