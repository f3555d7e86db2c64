package queen.server;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import queen.server.BrokerConfig.InvalidConfigException;

/**
 * Typed reads of the broker's environment variables: blank is unset and takes the default, and a
 * value out of its range or of the wrong type stops the broker with a message naming the variable.
 */
record EnvReader(Map<String, String> env) {
  String string(String name, String fallback) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      return fallback;
    }
    return v.trim();
  }

  boolean bool(String name, boolean fallback) {
    String v = string(name, null);
    if (v == null) {
      return fallback;
    }
    if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(v);
    }
    throw new InvalidConfigException(name + " must be true or false, got '" + v + "'");
  }

  URI uri(String name, String value) {
    try {
      URI u = new URI(value);
      if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme())) {
        throw new InvalidConfigException(
            name + " must be an http or https URL, got '" + value + "'");
      }
      return u;
    } catch (URISyntaxException e) {
      throw new InvalidConfigException(name + " is not a URL: '" + value + "'");
    }
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

  <E extends Enum<E>> E choice(String name, E fallback) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      return fallback;
    }
    for (E e : fallback.getDeclaringClass().getEnumConstants()) {
      if (e.name().equalsIgnoreCase(v.trim())) {
        return e;
      }
    }
    throw new InvalidConfigException(
        name
            + " must be one of "
            + Arrays.stream(fallback.getDeclaringClass().getEnumConstants())
                .map(e -> e.name().toLowerCase(Locale.ROOT))
                .toList()
            + ", got '"
            + v
            + "'");
  }

  double decimal(String name, double fallback, double min, double max) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      return fallback;
    }
    try {
      double d = Double.parseDouble(v.trim());
      if (!(d >= min && d <= max)) {
        throw new InvalidConfigException(
            name + " must be between " + min + " and " + max + ", got " + v);
      }
      return d;
    } catch (NumberFormatException e) {
      throw new InvalidConfigException(name + " must be a number, got '" + v + "'");
    }
  }
}
