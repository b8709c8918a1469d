package org.shine.server.peer;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigException;
import org.shine.server.db.ServerKeyRepository;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.KeyFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This deployment's server identity (PROTOCOL §6a): its serverLogin, public URL and Ed25519 server key, with
 * which it logs in to other servers. The key is kept in the database, so every node of a deployment shares it,
 * unless {@code serverKeyFile} names a key file.
 */
public final class ServerIdentity {
  private static final Logger LOG = LoggerFactory.getLogger(ServerIdentity.class);
  private final String serverLogin;
  private final String url;
  private final byte[] privateKey;
  private final byte[] publicKey;

  public ServerIdentity(String serverLogin, String url, byte[] privateKey) {
    this.serverLogin = Objects.requireNonNull(serverLogin);
    this.url = Objects.requireNonNull(url);
    this.privateKey = privateKey.clone();
    this.publicKey = Ed25519Signer.publicKeyOf(privateKey);
  }

  /** Reads {@code serverKeyFile} when set; otherwise the database's key, created there on the first start. */
  public static Future<ServerIdentity> load(AppConfig config, Pool pool, Clock clock) {
    if (config.serverKeyFile() != null) {
      try {
        KeyFile key = KeyFile.read(Path.of(config.serverKeyFile()));
        LOG.info("server key from {} [serverLogin: {}]", config.serverKeyFile(), config.serverLogin());
        return Future.succeededFuture(new ServerIdentity(config.serverLogin(), config.publicUrl(), key.privateKey()));
      } catch (IOException | RuntimeException e) {
        String why = e instanceof java.nio.file.NoSuchFileException ? "no such file"
            : e instanceof java.nio.file.AccessDeniedException ? "permission denied" : e.toString();
        return Future.failedFuture(new ConfigException("serverKeyFile " + config.serverKeyFile()
            + " is not a readable key file (" + why + "; make one with: keygen --out FILE)", e));
      }
    }
    Ed25519Signer.KeyPair candidate = Ed25519Signer.generate();
    return new ServerKeyRepository(pool)
        .loadOrCreate(config.serverLogin(), candidate.privateKey(), candidate.publicKey(), clock.millis())
        .map(stored -> {
          if (!stored.serverLogin().equals(config.serverLogin())) {
            LOG.warn("the server key in this database was made for serverLogin {}; it now serves as {}'s",
                stored.serverLogin(), config.serverLogin());
          }
          LOG.info("server key {} [serverLogin: {}]", Arrays.equals(stored.publicKey(), candidate.publicKey())
              ? "created in the database" : "read from the database", config.serverLogin());
          return new ServerIdentity(config.serverLogin(), config.publicUrl(), stored.privateKey());
        });
  }

  public String serverLogin() {
    return serverLogin;
  }

  public String url() {
    return url;
  }

  public byte[] publicKey() {
    return publicKey.clone();
  }

  public String publicKeyB64() {
    return Base64.getEncoder().encodeToString(publicKey);
  }

  /** The bytes a v2 ServerAuthLogin signature covers (PROTOCOL §6a step 6: only with peers of protocol v2). */
  public static byte[] loginBytes(String calleeServerLogin, String callerServerLogin, String challengeB64) {
    return ("SHiNE_SERVER_AUTH|" + calleeServerLogin + "|" + callerServerLogin + "|" + challengeB64)
        .getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The bytes a v3 ServerAuthLogin signature covers (PROTOCOL §6a step 5): the caller binds the URL it dialed, so
   * a signature made for one host is worth nothing at another.
   */
  public static byte[] loginBytesV3(String calleeServerLogin, String callerServerLogin, String url,
      String challengeB64) {
    return ("SHiNE_SERVER_AUTH3|" + calleeServerLogin + "|" + callerServerLogin + "|" + url + "|" + challengeB64)
        .getBytes(StandardCharsets.UTF_8);
  }

  /** The bytes of the callee's hello (PROTOCOL §6a step 3): it proves itself before the caller signs anything. */
  public static byte[] helloBytes(String calleeServerLogin, String callerServerLogin, String nonceB64,
      String challengeB64) {
    return ("SHiNE_SERVER_HELLO3|" + calleeServerLogin + "|" + callerServerLogin + "|" + nonceB64 + "|"
        + challengeB64).getBytes(StandardCharsets.UTF_8);
  }

  /** This server's v2 signature for logging in to {@code calleeServerLogin} with its challenge. */
  public byte[] signLogin(String calleeServerLogin, String challengeB64) {
    return Ed25519Signer.sign(privateKey, loginBytes(calleeServerLogin, serverLogin, challengeB64));
  }

  /** This server's v3 signature for logging in to {@code calleeServerLogin} at {@code url} with its challenge. */
  public byte[] signLoginV3(String calleeServerLogin, String url, String challengeB64) {
    return Ed25519Signer.sign(privateKey, loginBytesV3(calleeServerLogin, serverLogin, url, challengeB64));
  }

  /** This server's hello to {@code callerServerLogin}, answering its nonce with a fresh challenge. */
  public byte[] signHello(String callerServerLogin, String nonceB64, String challengeB64) {
    return Ed25519Signer.sign(privateKey, helloBytes(serverLogin, callerServerLogin, nonceB64, challengeB64));
  }
}
