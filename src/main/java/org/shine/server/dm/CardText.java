package org.shine.server.dm;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The exact text a user card is signed over (PROTOCOL §4), for v1 and v3 cards. The server and the clients build it
 * here and nowhere else, so what one signs the other verifies byte for byte.
 */
public final class CardText {
  private CardText() {
  }

  /** v1: {@code SHiNE_CARD|login|publicKeyB64|version|s1=url1|s2=url2}. */
  public static byte[] v1(String login, String publicKeyB64, long version, List<Map.Entry<String, String>> routes) {
    StringBuilder text = new StringBuilder("SHiNE_CARD|").append(login).append('|').append(publicKeyB64)
        .append('|').append(version);
    appendRoutes(text, routes);
    return text.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * v3: {@code SHiNE_CARD3|login|epoch|version|keys=k1,k2|recovery=r|enc=e|retired=k@t,k@t|revoked=x1,x2|s1=url1…},
   * lists in card order, empty after {@code =} when absent ({@code null} optional keys); labels are not signed.
   */
  public static byte[] v3(String login, long epoch, long version, List<String> keysB64, String recoveryKeyB64,
      String encryptionKeyB64, List<Map.Entry<String, Long>> retired, List<String> revokedB64,
      List<Map.Entry<String, String>> routes) {
    StringBuilder text = new StringBuilder("SHiNE_CARD3|").append(login).append('|').append(epoch).append('|')
        .append(version).append("|keys=").append(String.join(",", keysB64))
        .append("|recovery=").append(recoveryKeyB64 == null ? "" : recoveryKeyB64)
        .append("|enc=").append(encryptionKeyB64 == null ? "" : encryptionKeyB64).append("|retired=");
    for (int i = 0; i < retired.size(); i++) {
      text.append(i == 0 ? "" : ",").append(retired.get(i).getKey()).append('@').append(retired.get(i).getValue());
    }
    text.append("|revoked=").append(String.join(",", revokedB64));
    appendRoutes(text, routes);
    return text.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void appendRoutes(StringBuilder text, List<Map.Entry<String, String>> routes) {
    for (Map.Entry<String, String> route : routes) {
      text.append('|').append(route.getKey()).append('=').append(route.getValue());
    }
  }
}
