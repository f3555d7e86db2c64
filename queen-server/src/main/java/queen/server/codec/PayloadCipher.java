package queen.server.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Payload encryption at rest: AES-256-GCM with a fresh random 96-bit nonce per payload. A sealed
 * payload is {@code [version 1][key id 4][nonce 12][ciphertext][tag 16]}; the key id (a hash of the
 * key, not the key) says which key sealed it, so the current key can be replaced while payloads
 * sealed with older keys stay readable through the old keys: rotation never rewrites the log. The
 * version and key id are authenticated as associated data, so neither can be swapped unnoticed.
 */
public final class PayloadCipher {
  private static final byte VERSION = 1;
  private static final int KEY_ID = 4;
  private static final int NONCE = 12;
  private static final int TAG_BITS = 128;
  private static final int HEADER = 1 + KEY_ID + NONCE;
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Cipher objects are not thread-safe and cost more to make (~1.3 us) than to use. */
  private static final int IDLE_CIPHERS = 64;

  private final ArrayBlockingQueue<Cipher> idle = new ArrayBlockingQueue<>(IDLE_CIPHERS);

  private final Key current;
  private final Map<Integer, Key> byId = new LinkedHashMap<>();

  private record Key(int id, SecretKeySpec spec) {}

  /**
   * A cipher sealing with {@code current} (null: this broker only opens) and opening with it and
   * every key of {@code old}; each key is 32 bytes.
   */
  public PayloadCipher(byte[] current, List<byte[]> old) {
    this.current = current == null ? null : key(current);
    if (this.current != null) {
      byId.put(this.current.id(), this.current);
    }
    for (byte[] k : old) {
      Key key = key(k);
      byId.putIfAbsent(key.id(), key);
    }
  }

  /**
   * The 32 bytes of a key written as 64 hexadecimal characters, or an error saying what is wrong.
   */
  public static byte[] parseHexKey(String hex) {
    String h = hex.trim();
    if (h.length() != 64) {
      throw new IllegalArgumentException("must be 64 hexadecimal characters, got " + h.length());
    }
    try {
      return HexFormat.of().parseHex(h);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("must be 64 hexadecimal characters (0-9, a-f)");
    }
  }

  private static Key key(byte[] bytes) {
    if (bytes.length != 32) {
      throw new IllegalArgumentException("an AES-256 key has 32 bytes, got " + bytes.length);
    }
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update("queen payload key id".getBytes(StandardCharsets.US_ASCII));
      int id = ByteBuffer.wrap(sha.digest(bytes)).getInt();
      return new Key(id, new SecretKeySpec(bytes, "AES"));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }

  /** The id of the key that seals, or null when this cipher only opens. */
  public Integer currentKeyId() {
    return current == null ? null : current.id();
  }

  /** Whether a payload sealed with the key of this id can be opened. */
  public boolean opens(int keyId) {
    return byId.containsKey(keyId);
  }

  /** A key id as operators see it in messages: 8 hexadecimal digits. */
  public static String describe(int keyId) {
    return HexFormat.of().toHexDigits(keyId);
  }

  /** Whether this cipher can seal (a current key is configured). */
  public boolean canSeal() {
    return current != null;
  }

  /** The payload sealed with the current key under a fresh nonce. */
  public byte[] seal(byte[] plain) {
    if (current == null) {
      throw new IllegalStateException("no current key to seal with");
    }
    byte[] out = new byte[HEADER + plain.length + TAG_BITS / 8];
    out[0] = VERSION;
    ByteBuffer.wrap(out, 1, KEY_ID).putInt(current.id());
    byte[] nonce = new byte[NONCE];
    RANDOM.nextBytes(nonce);
    System.arraycopy(nonce, 0, out, 1 + KEY_ID, NONCE);
    Cipher c = borrow();
    try {
      c.init(Cipher.ENCRYPT_MODE, current.spec(), new GCMParameterSpec(TAG_BITS, nonce));
      c.updateAAD(out, 0, 1 + KEY_ID);
      c.doFinal(plain, 0, plain.length, out, HEADER);
      return out;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM sealing failed", e);
    } finally {
      idle.offer(c);
    }
  }

  /** The plain payload, or a {@link PayloadKeyException} saying why it cannot be opened. */
  public byte[] open(byte[] sealed) {
    if (sealed.length < HEADER + TAG_BITS / 8 || sealed[0] != VERSION) {
      throw new PayloadKeyException("not a sealed payload of a known version");
    }
    int id = ByteBuffer.wrap(sealed, 1, KEY_ID).getInt();
    Key key = byId.get(id);
    if (key == null) {
      throw new PayloadKeyException(
          "sealed with key "
              + describe(id)
              + ", which this broker does not have (QUEEN_ENCRYPTION_KEY,"
              + " QUEEN_ENCRYPTION_KEYS_OLD)");
    }
    Cipher c = borrow();
    try {
      c.init(
          Cipher.DECRYPT_MODE,
          key.spec(),
          new GCMParameterSpec(TAG_BITS, sealed, 1 + KEY_ID, NONCE));
      c.updateAAD(sealed, 0, 1 + KEY_ID);
      return c.doFinal(sealed, HEADER, sealed.length - HEADER);
    } catch (GeneralSecurityException e) {
      throw new PayloadKeyException("sealed payload does not authenticate: " + e.getMessage());
    } finally {
      idle.offer(c);
    }
  }

  /** An idle cipher object, or a new one; every use initialises it with its key and nonce. */
  private Cipher borrow() {
    Cipher c = idle.poll();
    if (c != null) {
      return c;
    }
    try {
      return Cipher.getInstance("AES/GCM/NoPadding");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES/GCM is missing from this JDK", e);
    }
  }
}
