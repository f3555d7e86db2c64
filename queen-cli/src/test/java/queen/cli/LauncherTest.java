package queen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The launcher's JVM defaults for a broker (docs/benchmarks.md, "Memory"), run for real by bash
 * against a stand-in JDK whose {@code java} prints what it was given: the defaults are there,
 * {@code JAVA_OPTS} come after them so that they win, a heap the user sizes gets no cap (a cap
 * below a user's starting heap would stop the JVM), and a container's memory limit, cgroup v1 or
 * v2, counts as the machine's memory.
 */
class LauncherTest {
  private static final String CAP = "-Xmx1g";

  @TempDir Path root;
  private Path jar;

  /** A copy of the launcher next to an up-to-date jar, so that it builds nothing. */
  @BeforeEach
  void layOut() throws IOException {
    Path launcher = root.resolve("queen");
    Files.copy(Path.of("..", "queen"), launcher);
    jar = root.resolve("queen-cli/target/queen.jar");
    Files.createDirectories(jar.getParent());
    Files.write(jar, new byte[0]);
  }

  // an IDE's files and a bench chart, newer than the jar, rebuilt it at every run; a service file,
  // which has no extension, did not
  @Test
  void onlyWhatGoesIntoTheJarMakesItStale() throws Exception {
    for (String other : List.of(".idea/workspace.xml", "docs/bench/batch-chart.svg")) {
      newerThanTheJar(root.resolve(other));
    }
    assertThat(run(25, Map.of(), "--version").err()).doesNotContain("building");
    newerThanTheJar(root.resolve("queen-server/src/main/resources/META-INF/services/a.B"));
    Files.createDirectories(root.resolve("fakebin"));
    script(root.resolve("fakebin/mvn"), "echo fake-mvn >&2; exit 1");
    Process p =
        finished(
            List.of("bash", root.resolve("queen").toString(), "--version"),
            25,
            Map.of("PATH", root.resolve("fakebin") + ":" + System.getenv("PATH")));
    assertThat(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8))
        .contains("building the broker")
        .contains("fake-mvn");
  }

  private void newerThanTheJar(Path file) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, "x");
    Files.setLastModifiedTime(
        file, FileTime.fromMillis(Files.getLastModifiedTime(jar).toMillis() + 10_000));
  }

  /** What the stand-in java printed: its arguments, then the two variables it was handed. */
  private record Exec(List<String> args, String arenas, String benchJvm, String err) {
    boolean has(String arg) {
      return args.contains(arg);
    }

    boolean anyStartsWith(String prefix) {
      return args.stream().anyMatch(a -> a.startsWith(prefix));
    }
  }

  private Path jdk(int major) throws IOException {
    Path home = root.resolve("jdk" + major);
    Files.createDirectories(home.resolve("bin"));
    Files.writeString(home.resolve("release"), "JAVA_VERSION=\"" + major + ".0.1\"\n");
    script(home.resolve("bin/javac"), "exit 0");
    script(
        home.resolve("bin/java"),
        "printf '%s\\n' \"$@\"\n"
            + "echo \"--arenas=${MALLOC_ARENA_MAX:-}\"\n"
            + "echo \"--bench=${QUEEN_SERVE_JVM:-}\"");
    return home;
  }

  private static void script(Path file, String body) throws IOException {
    Files.writeString(file, "#!/usr/bin/env bash\n" + body + "\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  private Exec run(int major, Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("bash", root.resolve("queen").toString()));
    command.addAll(List.of(args));
    return exec(command, major, env);
  }

  /** The launcher run to its end: it must not take 30 s. */
  private Process finished(List<String> command, int major, Map<String, String> env)
      throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> vars = pb.environment();
    for (String inherited :
        List.of("JAVA_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "MALLOC_ARENA_MAX")) {
      vars.remove(inherited);
    }
    vars.put("JAVA_HOME", jdk(major).toString());
    vars.putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("launcher finished").isTrue();
    return p;
  }

  private Exec exec(List<String> command, int major, Map<String, String> env) throws Exception {
    Process p = finished(command, major, env);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as(err).isZero();
    List<String> lines = new ArrayList<>(out.lines().toList());
    String bench = lines.removeLast().substring("--bench=".length());
    String arenas = lines.removeLast().substring("--arenas=".length());
    return new Exec(lines, arenas, bench, err);
  }

  private static boolean bigMachine() {
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    // the launcher caps at 4 GiB of machine or container memory; a margin for how each counts
    return os.getTotalMemorySize() >= 5L << 30;
  }

  @Test
  void aBrokerOnJdk25GetsTheMemoryDefaultsAndTheHeapCap() throws Exception {
    assumeTrue(bigMachine(), "below 4 GiB the JVM's own cap is the smaller one");
    Exec e = run(25, Map.of(), "serve");
    assertThat(e.args())
        .contains(
            "-XX:+ExitOnOutOfMemoryError",
            "-Xms8m",
            "-XX:TieredStopAtLevel=1",
            "-XX:GCTimeRatio=2",
            "-XX:G1PeriodicGCInterval=30000",
            "-XX:+UseCompactObjectHeaders",
            "-XX:TrimNativeHeapInterval=10000",
            CAP)
        .endsWith("-jar", jar.toString(), "serve");
    assertThat(e.arenas()).isEqualTo("2");
    assertThat(e.benchJvm()).as("the bench's own brokers").contains("-Xms8m", CAP);
  }

  @Test
  void javaOptsComeAfterTheDefaultsSoTheyWin() throws Exception {
    Exec e = run(25, Map.of("JAVA_OPTS", "-XX:TieredStopAtLevel=4 -Xss512k"), "serve");
    assertThat(e.args().indexOf("-XX:TieredStopAtLevel=4"))
        .isGreaterThan(e.args().indexOf("-XX:TieredStopAtLevel=1"));
    assertThat(e.args().indexOf("-Xss512k")).isLessThan(e.args().indexOf("-jar"));
  }

  @Test
  void oneJavaOptMayHoldSpacesInQuotes() throws Exception {
    Exec e =
        run(
            25,
            Map.of(
                "JAVA_OPTS", "-Dqueen.a=\"one two\" '-Dqueen.b=three  four' -Dqueen.c=five\\ six"),
            "serve");
    assertThat(e.args())
        .containsSubsequence(
            "-Dqueen.a=one two", "-Dqueen.b=three  four", "-Dqueen.c=five six", "-jar");
    assertThat(run(25, Map.of("JAVA_OPTS", "-Dqueen.a=\"one two\""), "push", "q", "{}").args())
        .as("every command")
        .contains("-Dqueen.a=one two");
  }

  @Test
  void javaOptsThatCannotBeSplitStopTheLauncherWithoutPrintingThem() throws Exception {
    Process p =
        finished(
            List.of("bash", root.resolve("queen").toString(), "serve"),
            25,
            Map.of("JAVA_OPTS", "-Dsecret=\"s3cr3t -Xss1m"));
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.exitValue()).isNotZero();
    assertThat(err).contains("JAVA_OPTS could not be split into options").doesNotContain("s3cr3t");
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource({
    "JAVA_OPTS, -Xms2g",
    "JAVA_OPTS, -Xmx300m",
    "JAVA_OPTS, -XX:MaxRAM=2g",
    "JAVA_OPTS, -XX:MaxHeapSize=512m",
    "JAVA_TOOL_OPTIONS, -Xmx512m",
    "JDK_JAVA_OPTIONS, -XX:InitialHeapSize=64m",
  })
  void aHeapTheUserSizesGetsNoCap(String variable, String option) throws Exception {
    Exec e = run(25, Map.of(variable, option), "serve");
    assertThat(e.args()).doesNotContain(CAP).contains("-Xms8m");
    assertThat(e.benchJvm()).doesNotContain(CAP);
  }

  /**
   * {@code serve} with one file under {@code /sys/fs/cgroup} of a fresh mount namespace holding
   * {@code limit}: a user namespace's tmpfs hides the machine's own cgroup files.
   */
  private Exec serveUnderCgroupFile(String file, String limit) throws Exception {
    String path = "/sys/fs/cgroup" + file;
    String setup =
        "mount -t tmpfs none /sys/fs/cgroup && mkdir -p \"$(dirname \"$1\")\""
            + " && printf '%s\\n' \"$2\" > \"$1\" && exec bash \"$3\" serve";
    return exec(
        List.of(
            "unshare",
            "-rm",
            "bash",
            "-c",
            setup,
            "cgroup",
            path,
            limit,
            root.resolve("queen").toString()),
        25,
        Map.of());
  }

  private static boolean privateMountsWork() throws Exception {
    Process p = new ProcessBuilder("unshare", "-rm", "true").start();
    return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  /**
   * This process's path, without a trailing slash, in the cgroup hierarchy whose line in
   * /proc/self/cgroup matches; the test is skipped where there is none.
   */
  private static String own(String linePattern, String hierarchy) throws IOException {
    String path =
        Files.readAllLines(Path.of("/proc/self/cgroup")).stream()
            .filter(l -> l.matches(linePattern))
            .map(l -> l.substring(l.indexOf(':', l.indexOf(':') + 1) + 1))
            .findFirst()
            .orElse(null);
    assumeTrue(path != null, "no " + hierarchy + " here");
    return path.replaceAll("/$", "");
  }

  @ParameterizedTest(name = "{0} {1} {2}")
  @CsvSource({
    "v2-own, 2147483648, false",
    "v2-own, max, true",
    "v2-root, 3221225472, false",
    "v1-own, 1073741824, false",
    "v1-root, 9223372036854771712, true",
    "v1-root, 2147483648, false",
    "v1-root, garbage, true",
  })
  void aContainersMemoryLimitDecidesTheHeapCap(String where, String limit, boolean capped)
      throws Exception {
    assumeTrue(bigMachine(), "below 4 GiB the machine alone decides");
    assumeTrue(privateMountsWork(), "needs unshare -rm (user and mount namespaces)");
    String file =
        switch (where) {
          case "v2-own" -> own("^0::.*", "cgroup v2") + "/memory.max";
          case "v2-root" -> "/memory.max";
          case "v1-own" ->
              "/memory"
                  + own("^[0-9]+:[^:]*\\bmemory\\b.*", "cgroup v1's memory controller")
                  + "/memory.limit_in_bytes";
          default -> "/memory/memory.limit_in_bytes";
        };
    Exec e = serveUnderCgroupFile(file, limit);
    assertThat(e.has(CAP)).as("capped with %s at %s", limit, file).isEqualTo(capped);
    assertThat(e.args()).contains("-Xms8m");
  }

  @Test
  void jdk21GetsNeitherTheJdk25FlagsNorAnAotCache() throws Exception {
    Exec e = run(21, Map.of(), "serve");
    assertThat(e.args())
        .contains("-Xms8m")
        .doesNotContain("-XX:+UseCompactObjectHeaders", "-XX:TrimNativeHeapInterval=10000");
    assertThat(e.anyStartsWith("-XX:AOTCache")).isFalse();
  }

  @Test
  void theFirstServeRecordsAnAotCacheAndTheNextUsesItOnceTheRecorderServed() throws Exception {
    Path cache = root.resolve("queen-cli/target/queen.aot");
    assertThat(run(25, Map.of(), "serve").args()).contains("-XX:AOTCacheOutput=" + cache);

    Files.write(cache, new byte[0]);
    Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(60)));
    assertThat(run(25, Map.of(), "serve").args())
        .as("a cache whose recording broker never listened (a failed start wrote it)")
        .contains("-XX:AOTCacheOutput=" + cache);

    Files.write(cache, new byte[0]);
    Files.write(root.resolve("queen-cli/target/queen.aot.served"), new byte[0]);
    Exec again = run(25, Map.of(), "serve");
    assertThat(again.args()).contains("-XX:AOTCache=" + cache);
    assertThat(again.anyStartsWith("-XX:AOTCacheOutput")).isFalse();
  }

  @Test
  void aCacheOlderThanTheJarIsRecordedAgain() throws Exception {
    Path cache = root.resolve("queen-cli/target/queen.aot");
    Files.write(cache, new byte[0]);
    Files.setLastModifiedTime(cache, FileTime.from(Instant.now().minusSeconds(60)));
    assertThat(run(25, Map.of(), "serve").args()).contains("-XX:AOTCacheOutput=" + cache);
  }

  @Test
  void noCacheIsRecordedUnderNativeMemoryTrackingOrForServeHelp() throws Exception {
    Exec tracked = run(25, Map.of("JAVA_OPTS", "-XX:NativeMemoryTracking=summary"), "serve");
    assertThat(tracked.anyStartsWith("-XX:AOTCache")).isFalse();
    Exec help = run(25, Map.of(), "serve", "--help");
    assertThat(help.anyStartsWith("-XX:AOTCache")).isFalse();
    assertThat(help.args()).endsWith("serve", "--help");
  }

  @Test
  void anExplicitMallocArenaMaxIsKept() throws Exception {
    assertThat(run(25, Map.of("MALLOC_ARENA_MAX", "4"), "serve").arenas()).isEqualTo("4");
  }

  @Test
  void aJavaHomeBelow21GivesWayToTheJdkWhoseJavacIsOnThePath() throws Exception {
    Path newer = jdk(99); // newer than any under /usr/lib/jvm
    Exec e =
        run(17, Map.of("PATH", newer.resolve("bin") + ":" + System.getenv("PATH")), "--version");
    // before, only /usr/lib/jvm was searched: a JDK on PATH (macOS, asdf, /opt) went unseen
    assertThat(e.err()).contains("is not a JDK 21 or newer");
    assertThat(e.args()).contains("--version");
  }

  @Test
  void otherCommandsRunWithoutTheBrokersDefaults() throws Exception {
    Exec e = run(25, Map.of("JAVA_OPTS", "-Xss1m"), "push", "q", "{}");
    assertThat(e.args())
        .containsExactly(
            "-XX:+ExitOnOutOfMemoryError", "-Xss1m", "-jar", jar.toString(), "push", "q", "{}");
    assertThat(e.benchJvm()).as("queen bench starts brokers").contains("-Xms8m");
  }
}
