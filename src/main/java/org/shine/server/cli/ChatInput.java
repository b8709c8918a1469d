package org.shine.server.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Map;
import java.util.Objects;
import org.jline.keymap.KeyMap;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.Reference;
import org.jline.reader.UserInterruptException;
import org.jline.reader.impl.LineReaderImpl;
import org.jline.terminal.Attributes;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import org.jline.utils.NonBlockingReader;

/**
 * Where {@code client chat} reads typed lines and sends what it shows. On a person's terminal it is a line editor
 * (JLine): the terminal is in raw mode, so a line has no length limit (the kernel's canonical mode cuts at 4,095
 * characters), a paste arrives whole, Ctrl-C is a key read in order with the rest, and everything printed goes above
 * the line being typed. Otherwise lines are read from standard input as they come (pipes, scripts, tests).
 */
interface ChatInput extends AutoCloseable {
  /** The next typed line; null at the end of the input. */
  String readLine() throws IOException, Interrupted;

  /** Where the chat's lines go. */
  ChatScreen.Sink sink();

  /** True when the terminal itself echoes what is typed (no line editor erases it). */
  boolean echoes();

  /**
   * After the last line, while the chat leaves: blocks the input thread until Ctrl-C, which runs {@code action}, or
   * until the input is closed. Without a line editor it returns at once (Ctrl-C then stops the process).
   */
  void untilInterrupted(Runnable action);

  /** The terminal's width in columns. */
  int columns();

  /** The terminal's height in rows. */
  int rows();

  @Override
  void close();

  /** How long JLine waits for the terminal to answer its questions, in ms. */
  String PROBE_TIMEOUT = "org.jline.terminal.probe.timeout";
  /** Whether JLine raises Ctrl-C as a signal when its reader meets the key. */
  String SOFTWARE_SIGNALS = "org.jline.terminal.softwareSignals";

  /** Ctrl-C at the prompt; {@code partial} is what was typed and not sent. */
  final class Interrupted extends Exception {
    private final String partial;

    Interrupted(String partial) {
      super("interrupted", null, false, false);
      this.partial = partial == null ? "" : partial;
    }

    String partial() {
      return partial;
    }
  }

  /**
   * A line editor when a person types at a terminal ({@code editor}) and one can be made, else standard input;
   * {@code echoes}: whether, without an editor, the terminal echoes typed lines.
   */
  static ChatInput open(CliContext context, boolean editor, boolean echoes) {
    if (editor) {
      // JLine asks the terminal which modes it supports; on a busy machine an answer later than JLine's default
      // 200 ms would arrive as typed text ("[?1;2c" at the prompt). Every terminal answers the question.
      if (System.getProperty(PROBE_TIMEOUT) == null) {
        System.setProperty(PROBE_TIMEOUT, "3000");
      }
      // JLine would turn Ctrl-C into a signal as it reads ahead, cutting off keys typed before it (Editor)
      System.setProperty(SOFTWARE_SIGNALS, "false");
      try {
        return new Editor(TerminalBuilder.builder().system(true).dumb(false).build());
      } catch (IOException | RuntimeException e) {
        context.err().println("chat: no line editor on this terminal (" + e.getMessage() + "); reading plain lines");
      }
    }
    return new Lines(context, echoes);
  }

  /** Lines from standard input, shown on standard output. */
  final class Lines implements ChatInput {
    private final CliContext context;
    private final boolean echoes;
    private final ChatScreen.Sink sink;

    Lines(CliContext context, boolean echoes) {
      this.context = Objects.requireNonNull(context);
      this.echoes = echoes;
      PrintWriter out = context.out();
      this.sink = new ChatScreen.Sink() {
        @Override
        public void line(String line) {
          out.println(line);
          out.flush();
        }

        @Override
        public void controls(String controls) {
          out.print(controls);
          out.flush();
        }

        @Override
        public void erase(String controls) {
          controls(controls);
        }
      };
    }

    @Override
    public String readLine() throws IOException {
      return context.in().readLine();
    }

    @Override
    public ChatScreen.Sink sink() {
      return sink;
    }

    @Override
    public boolean echoes() {
      return echoes;
    }

    @Override
    public void untilInterrupted(Runnable action) {
      // Ctrl-C stops the process; its shutdown hook waits for the chat (CliContext#onStop)
    }

    @Override
    public int columns() {
      return size(context.env(), "COLUMNS", 80);
    }

    @Override
    public int rows() {
      return size(context.env(), "LINES", 24);
    }

    @Override
    public void close() {
      // standard input and output belong to the process
    }

    private static int size(Map<String, String> env, String name, int otherwise) {
      try {
        return Integer.parseInt(env.getOrDefault(name, Integer.toString(otherwise)));
      } catch (NumberFormatException e) {
        return otherwise;
      }
    }
  }

  /** A JLine line editor on the process's terminal; what is printed goes above the prompt. */
  final class Editor implements ChatInput {
    private static final String PROMPT = "> ";
    /** Characters inserted at once at most (the line is drawn again after each run). */
    private static final int RUN = 8_192;
    private static final int DEL = 0x7f;
    private static final int CTRL_C = 0x03;
    private static final String INTERRUPT = "chat-interrupt";
    /** What was typed when Ctrl-C was pressed, until {@link #readLine} reports it. */
    private volatile String interrupted;
    private final Terminal terminal;
    private final LineReader reader;
    private final ChatScreen.Sink sink;

    Editor(Terminal terminal) {
      this.terminal = terminal;
      // JLine asks the terminal about its modes the first time it draws, and drops what was typed meanwhile: ask
      // now, before the prompt shows, so that no key typed at the prompt is lost
      terminal.isModeSupported(Terminal.Mode.GRAPHEME_CLUSTER);
      this.reader = LineReaderBuilder.builder().terminal(terminal)
          .option(LineReader.Option.ERASE_LINE_ON_FINISH, true) // the message is printed formatted instead
          .option(LineReader.Option.DISABLE_EVENT_EXPANSION, true) // "!" is text, not a history reference
          .option(LineReader.Option.AUTO_FRESH_LINE, false)
          .build();
      insertWhatIsWaiting((LineReaderImpl) reader);
      interruptAsKey();
      this.sink = new ChatScreen.Sink() {
        @Override
        public void line(String line) {
          reader.printAbove(line + "\n");
        }

        @Override
        public void controls(String controls) {
          reader.printAbove(controls);
        }

        @Override
        public void erase(String controls) {
          // the editor erases the typed line itself
        }
      };
    }

    /**
     * Typing a character also inserts the printable characters already waiting behind it, up to {@link #RUN}: a
     * paste the terminal does not bracket arrives as one key each, and the editor would draw the whole line again
     * after every one of them (minutes for 70,000 characters).
     */
    private static void insertWhatIsWaiting(LineReaderImpl reader) {
      reader.getWidgets().put(LineReader.SELF_INSERT, () -> {
        StringBuilder run = new StringBuilder(reader.getLastBinding());
        for (int next; run.length() < RUN && (next = reader.peekCharacter(1)) >= ' ' && next != DEL; ) {
          run.appendCodePoint(reader.readCharacter());
        }
        reader.getBuffer().write(run);
        return true;
      });
    }

    @Override
    public String readLine() throws Interrupted {
      try {
        String line = reader.readLine(PROMPT);
        if (interrupted != null) {
          String partial = interrupted;
          interrupted = null;
          throw new Interrupted(partial);
        }
        return line;
      } catch (UserInterruptException e) {
        throw new Interrupted(e.getPartialLine());
      } catch (EndOfFileException e) {
        return null;
      }
    }

    /**
     * Ctrl-C as a key, read in order with what was typed before it. As a signal (the terminal's default, or JLine's
     * own when it meets the key reading ahead) it would overtake the input: what the editor has not handled yet is
     * dropped, so a line typed with Enter just before Ctrl-C would be lost.
     */
    private void interruptAsKey() {
      Attributes attributes = terminal.getAttributes();
      attributes.setLocalFlag(Attributes.LocalFlag.ISIG, false);
      terminal.setAttributes(attributes);
      reader.getWidgets().put(INTERRUPT, () -> {
        interrupted = reader.getBuffer().toString();
        reader.getBuffer().clear();
        reader.callWidget(LineReader.ACCEPT_LINE);
        return true;
      });
      reader.getKeyMaps().get(LineReader.MAIN).bind(new Reference(INTERRUPT), KeyMap.ctrl('C'));
    }

    @Override
    public ChatScreen.Sink sink() {
      return sink;
    }

    @Override
    public boolean echoes() {
      return false;
    }

    @Override
    public void untilInterrupted(Runnable action) {
      try {
        Attributes before = terminal.enterRawMode();
        try {
          for (int key; (key = terminal.reader().read(100)) != NonBlockingReader.EOF; ) {
            if (key == CTRL_C) {
              action.run();
              return;
            }
          }
        } finally {
          terminal.setAttributes(before);
        }
      } catch (IOException | IllegalStateException e) {
        // the terminal was closed (the chat has ended); close() gave it back as it was
      }
    }

    @Override
    public int columns() {
      return terminal.getWidth() > 0 ? terminal.getWidth() : 80;
    }

    @Override
    public int rows() {
      return terminal.getHeight() > 0 ? terminal.getHeight() : 24;
    }

    @Override
    public void close() {
      try {
        terminal.close(); // gives the terminal back as it was (cooked mode, echo)
      } catch (IOException e) {
        // the process is ending; nothing more to restore
      }
    }
  }
}
