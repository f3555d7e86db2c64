package queen.bench;

/**
 * How {@link Scenarios#fill} pushes a backlog: {@code batch} messages a push (one stored segment
 * each) of {@code payload} bytes, padded with one letter (which compresses to almost nothing) or
 * with random ones (stored at about 60% of its size, nearer to what real payloads cost).
 */
record Fill(int batch, int payload, boolean random) {
  static final Fill DEFAULT = new Fill(100, 30, false);

  Fill {
    if (batch < 1 || payload < 0) {
      throw new IllegalArgumentException("a fill needs a batch of at least 1 and a payload size");
    }
  }
}
