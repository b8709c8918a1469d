package org.shine.server.cli;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A line typed in {@code client chat}: a message to send, or one of the chat's commands. A line that starts with
 * {@code /} is a command; {@code //} sends the rest as a message that starts with {@code /}.
 */
sealed interface ChatLine {
  /** Messages counted back among the user's own, as {@code /edit 2} and {@code /delete 2} name them. */
  int MAX_BACK = 1_000;
  /** Messages {@code /history} shows at most (one page of the server). */
  int MAX_HISTORY = 200;

  /** The commands and what they do, as {@code /help} prints them. */
  List<String> HELP = List.of(
      "/help              this list",
      "/quit              leave (Ctrl-C and Ctrl-D too; messages still on their way are waited for)",
      "/edit [N] TEXT     replace the text of your last message (N: your N-th last, 1 = the last)",
      "/delete [N]        delete your last message (N: your N-th last); it is gone from your servers",
      "/history [N]       the last N messages again (default 20, at most " + MAX_HISTORY + "), with their keys",
      "//TEXT             send a message that starts with /");

  /** A message to send. */
  record Message(String text) implements ChatLine {
  }

  record Help() implements ChatLine {
  }

  record Quit() implements ChatLine {
  }

  /** {@code back}: 1 for the user's last message, 2 for the one before, ... */
  record Edit(int back, String text) implements ChatLine {
  }

  record Delete(int back) implements ChatLine {
  }

  record History(int count) implements ChatLine {
  }

  /** A line that starts with {@code /} and is not a command as written; {@code reason} says what is wrong. */
  record Unknown(String reason) implements ChatLine {
  }

  Pattern COMMAND = Pattern.compile("/(\\S*)\\s*(.*)", Pattern.DOTALL);
  Pattern COUNTED = Pattern.compile("(\\d{1,9})(?:\\s+(.*))?", Pattern.DOTALL);

  static ChatLine parse(String typed) {
    String line = typed.strip();
    if (line.startsWith("//")) {
      return new Message(line.substring(1));
    }
    Matcher command = COMMAND.matcher(line);
    if (!command.matches()) {
      return new Message(typed);
    }
    String name = command.group(1);
    String rest = command.group(2).strip();
    return switch (name) {
      case "help", "?" -> new Help();
      case "quit", "exit" -> new Quit();
      case "edit" -> edit(rest);
      case "delete" -> {
        if (rest.isEmpty()) {
          yield new Delete(1);
        }
        Integer back = count(rest, MAX_BACK);
        yield back == null ? new Unknown("/delete takes a number: /delete [N] (N: your N-th last message)")
            : new Delete(back);
      }
      case "history" -> {
        if (rest.isEmpty()) {
          yield new History(20);
        }
        Integer count = count(rest, MAX_HISTORY);
        yield count == null ? new Unknown("/history takes a number from 1 to " + MAX_HISTORY) : new History(count);
      }
      default -> new Unknown("/" + name + " is not a command (/help lists them; //" + name
          + " sends it as a message)");
    };
  }

  private static ChatLine edit(String rest) {
    Matcher counted = COUNTED.matcher(rest);
    if (counted.matches() && counted.group(2) != null && !counted.group(2).isBlank()) {
      int back = Integer.parseInt(counted.group(1));
      if (back < 1 || back > MAX_BACK) {
        return new Unknown("/edit N counts your messages back from 1 (the last) to " + MAX_BACK);
      }
      return new Edit(back, counted.group(2).strip());
    }
    if (rest.isEmpty() || counted.matches()) {
      return new Unknown("/edit needs the new text: /edit [N] TEXT (to take a message back, /delete)");
    }
    return new Edit(1, rest);
  }

  /** A count from 1 to {@code max}, or null. */
  private static Integer count(String word, int max) {
    if (!word.matches("\\d{1,9}")) {
      return null;
    }
    int n = Integer.parseInt(word);
    return n >= 1 && n <= max ? n : null;
  }
}
