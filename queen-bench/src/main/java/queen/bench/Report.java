package queen.bench;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where results go: appended to {@code results.json} in the output folder, and rendered from there
 * as Markdown tables ({@code results.md}) and a chart of msg/s against batch size ({@code
 * batch-chart.svg}) for the broker and both baselines.
 */
final class Report {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** A result's note: the broker's resident memory when the scenario read it, in MB. */
  static final String RSS_NOW = "brokerRssMB";

  /** A result's note: the broker's peak resident memory during the scenario, in MB. */
  static final String RSS_PEAK = "brokerPeakRssMB";

  private Report() {}

  static synchronized void append(Path dir, Result r) throws Exception {
    Files.createDirectories(dir);
    List<Result> all = read(dir);
    all.add(r);
    JSON.writeValue(dir.resolve("results.json").toFile(), all);
  }

  static List<Result> read(Path dir) throws Exception {
    Path f = dir.resolve("results.json");
    if (!Files.exists(f)) {
      return new ArrayList<>();
    }
    return JSON.readValue(f.toFile(), new TypeReference<List<Result>>() {});
  }

  /** Writes results.md and batch-chart.svg from results.json. */
  static void render(Path dir, Map<String, Object> environment) throws Exception {
    List<Result> all = read(dir);
    StringBuilder md = new StringBuilder("# Benchmark results\n\n");
    environment.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
    md.append(
        "\nbroker RSS: the broker process's peak resident memory during the scenario (its"
            + " backlog's fill included); on idle rows, what it holds after that long without"
            + " requests; on the parked row, what it holds with every consumer parked.\n");
    md.append(
        "\n| scenario | target | msg/s | p50 | p99 | p99.9 | broker RSS | parameters | notes |\n");
    md.append("|---|---|---:|---:|---:|---:|---:|---|---|\n");
    for (Result r : all) {
      Map<String, Object> notes = new LinkedHashMap<>(r.extra());
      Object rss = notes.containsKey(RSS_PEAK) ? notes.remove(RSS_PEAK) : notes.remove(RSS_NOW);
      // an idle row made no requests: no rate or latency to show
      boolean timed = r.requests() > 0 || r.errors() > 0;
      md.append(
          String.format(
              "| %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
              r.scenario(),
              r.target(),
              timed ? r.rateText() : "",
              timed ? Result.ms(r.p50Micros()) : "",
              timed ? Result.ms(r.p99Micros()) : "",
              timed ? Result.ms(r.p999Micros()) : "",
              rss == null ? "" : rss + " MB",
              r.params(),
              notes.isEmpty() ? "" : notes));
    }
    Files.writeString(dir.resolve("results.md"), md);
    Files.writeString(dir.resolve("batch-chart.svg"), chart(all));
  }

  /** msg/s against batch size, one line per (scenario, target), for the push and pop-ack runs. */
  static String chart(List<Result> all) {
    Map<String, TreeMap<Integer, Double>> lines = new TreeMap<>();
    for (Result r : all) {
      if ((r.scenario().equals("push") || r.scenario().equals("pop-ack"))
          && r.valid()
          && r.params().get("batch") instanceof Number b) {
        lines
            .computeIfAbsent(r.scenario() + " " + r.target(), k -> new TreeMap<>())
            .merge(b.intValue(), r.rate(), Math::max);
      }
    }
    double max =
        lines.values().stream()
            .flatMap(m -> m.values().stream())
            .max(Comparator.naturalOrder())
            .orElse(1.0);
    int w = 720;
    int h = 420;
    int left = 80;
    int bottom = 360;
    int top = 30;
    int right = 560;
    StringBuilder svg = new StringBuilder();
    svg.append(
        String.format(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                + " font-family=\"sans-serif\" font-size=\"12\">%n",
            w, h));
    svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    svg.append(
        String.format(
            "<text x=\"%d\" y=\"18\" font-size=\"14\">msg/s against batch size (log scale)</text>%n",
            left));
    svg.append(
        String.format(
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n",
            left, bottom, right, bottom));
    svg.append(
        String.format(
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n",
            left, top, left, bottom));
    for (int i = 0; i <= 4; i++) {
      double v = max * i / 4;
      int y = bottom - (int) ((bottom - top) * i / 4.0);
      svg.append(
          String.format(
              "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%,.0f</text>%n", left - 6, y + 4, v));
      svg.append(
          String.format(
              "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>%n",
              left, y, right, y));
    }
    int[] batches = {1, 10, 100, 1000};
    for (int b : batches) {
      int x = xOf(b, left, right);
      svg.append(
          String.format(
              "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>%n", x, bottom + 18, b));
    }
    String[] colors = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
    int i = 0;
    for (var e : lines.entrySet()) {
      String color = colors[i % colors.length];
      String dash = e.getKey().startsWith("pop") ? " stroke-dasharray=\"6,3\"" : "";
      StringBuilder points = new StringBuilder();
      for (var p : e.getValue().entrySet()) {
        int x = xOf(p.getKey(), left, right);
        int y = bottom - (int) ((bottom - top) * p.getValue() / max);
        points.append(x).append(',').append(y).append(' ');
        svg.append(
            String.format("<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"%s\"/>%n", x, y, color));
      }
      svg.append(
          String.format(
              "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
              points.toString().trim(), color, dash));
      int ly = top + 10 + 18 * i;
      svg.append(
          String.format(
              "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
              right + 15, ly, right + 40, ly, color, dash));
      svg.append(
          String.format("<text x=\"%d\" y=\"%d\">%s</text>%n", right + 46, ly + 4, e.getKey()));
      i++;
    }
    return svg.append("</svg>\n").toString();
  }

  private static int xOf(int batch, int left, int right) {
    double f = Math.log10(batch) / 3.0;
    return left + 20 + (int) ((right - left - 40) * f);
  }
}
