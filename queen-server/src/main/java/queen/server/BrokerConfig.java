package queen.server;

import java.time.Duration;
import java.util.Map;
import queen.server.store.DbConfig;

/**
 * Everything the broker reads from its environment, read once at start. The variable names are
 * Queen's (PG_HOST, PORT, ...), so a deployment of Queen carries over. An invalid value stops the
 * broker with a message naming the variable.
 *
 * @param host HOST, the address to listen on
 * @param port PORT, 0 for any free port
 * @param maxBodyBytes MAX_BODY_BYTES, the largest request body accepted (413 beyond)
 * @param sweepInterval QUEEN_SWEEP_INTERVAL_MS, how often messages past their queue's
 *     maxWaitTimeSeconds are moved to the dead letters
 */
public record BrokerConfig(
    String host, int port, DbConfig db, long maxBodyBytes, Duration sweepInterval) {

  public static BrokerConfig fromEnv(Map<String, String> env) {
    Reader r = new Reader(env);
    DbConfig db =
        new DbConfig(
            r.string("PG_HOST", "localhost"),
            r.integer("PG_PORT", 5432, 1, 65_535),
            r.string("PG_USER", "postgres"),
            env.getOrDefault("PG_PASSWORD", ""),
            r.string("PG_DB", "postgres"),
            r.integer("DB_POOL_SIZE", 20, 1, 10_000));
    return new BrokerConfig(
        r.string("HOST", "0.0.0.0"),
        r.integer("PORT", 6632, 0, 65_535),
        db,
        r.integer("MAX_BODY_BYTES", 64 << 20, 1024, Integer.MAX_VALUE),
        Duration.ofMillis(r.integer("QUEEN_SWEEP_INTERVAL_MS", 5_000, 10, 3_600_000)));
  }

  /** A configuration value the broker cannot start with. */
  public static final class InvalidConfigException extends RuntimeException {
    InvalidConfigException(String message) {
      super(message);
    }
  }

  private record Reader(Map<String, String> env) {
    String string(String name, String fallback) {
      String v = env.get(name);
      if (v == null || v.isBlank()) {
        return fallback;
      }
      return v.trim();
    }

    int integer(String name, int fallback, int min, int max) {
      String v = env.get(name);
      if (v == null || v.isBlank()) {
        return fallback;
      }
      try {
        int n = Integer.parseInt(v.trim());
        if (n < min || n > max) {
          throw new InvalidConfigException(
              name + " must be between " + min + " and " + max + ", got " + v);
        }
        return n;
      } catch (NumberFormatException e) {
        throw new InvalidConfigException(name + " must be an integer, got '" + v + "'");
      }
    }
  }
}
