package org.shine.server.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.AroundTryHook;
import net.jqwik.api.lifecycle.MethodLifecycleContext;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.jqwik.api.lifecycle.TryExecutionResult;
import net.jqwik.api.lifecycle.TryExecutor;
import net.jqwik.api.lifecycle.TryLifecycleContext;

/**
 * The fuzz properties' tries and ledger. In the normal suite a property runs the tries its annotation names; the
 * long run ({@code scripts/fuzz.sh}) sets {@code -Dshine.fuzz.tries=N} for every property instead and
 * {@code -Dshine.fuzz.report=FILE}, to which each property appends a progress line every
 * {@code shine.fuzz.progressEvery} tries (default 1,000) and one summary line when it ends.
 */
public final class FuzzTries implements AroundPropertyHook, AroundTryHook {
  private static final String TRIES = "shine.fuzz.tries";
  private static final String REPORT = "shine.fuzz.report";
  /** One counter per property label; there are a handful of properties. */
  private static final Map<String, AtomicLong> TRIED = new ConcurrentHashMap<>();

  /** Registered on a test class, it applies to every property in it. */
  @Override
  public PropagationMode propagateTo() {
    return PropagationMode.ALL_DESCENDANTS;
  }

  @Override
  public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
    String tries = System.getProperty(TRIES);
    if (tries != null && !tries.isBlank()) {
      context.attributes().setTries(Integer.parseInt(tries.trim()));
    }
    String label = label(context);
    TRIED.put(label, new AtomicLong());
    long started = System.nanoTime();
    PropertyExecutionResult result = property.execute();
    long ms = (System.nanoTime() - started) / 1_000_000;
    report(String.format("done %s tries=%d checks=%d status=%s ms=%d%s", label, result.countTries(),
        result.countChecks(), result.status(), ms,
        result.throwable().map(t -> " failure=" + oneLine(t.toString())).orElse("")));
    return result;
  }

  @Override
  public TryExecutionResult aroundTry(TryLifecycleContext context, TryExecutor aTry, List<Object> parameters) {
    TryExecutionResult result = aTry.execute(parameters);
    String label = label(context);
    long tried = TRIED.computeIfAbsent(label, l -> new AtomicLong()).incrementAndGet();
    if (tried % Long.getLong("shine.fuzz.progressEvery", 1_000) == 0) {
      report(String.format("progress %s tries=%d", label, tried));
    }
    return result;
  }

  /** Class and method: one word, unlike the property's label. */
  private static String label(MethodLifecycleContext context) {
    return context.containerClass().getSimpleName() + "." + context.targetMethod().getName();
  }

  private static String oneLine(String text) {
    String line = text.replaceAll("\\s+", " ");
    return line.length() > 300 ? line.substring(0, 300) + "..." : line;
  }

  private static synchronized void report(String line) {
    String file = System.getProperty(REPORT);
    if (file == null || file.isBlank()) {
      return;
    }
    try {
      Files.writeString(Path.of(file), line + System.lineSeparator(), StandardCharsets.UTF_8,
          StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
