package org.shine.server.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import org.shine.server.client.ShineClient;
import org.shine.server.util.Json;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Parameters;

/** {@code client settings get|set}: the user's settings. */
@Command(name = "settings", mixinStandardHelpOptions = true, description = "The user's settings.",
    subcommands = {ClientSettings.Get.class, ClientSettings.Set.class, HelpCommand.class})
final class ClientSettings {
  private ClientSettings() {
  }

  @Command(name = "get", mixinStandardHelpOptions = true, description = "Print every setting, or one.")
  static final class Get extends UserCommand {
    @Parameters(arity = "0..1", paramLabel = "KEY", description = "only this setting")
    String key;

    Get(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      JsonNode settings = ClientSupport.await(session(vertx, user).allSettings());
      if (key != null) {
        if (!settings.has(key)) {
          throw new CliFailure(CliFailure.NOT_FOUND, "no setting " + key);
        }
        print(settings.get(key), settings.get(key).toString());
        return 0;
      }
      if (options.json) {
        context.out().println(settings);
        return 0;
      }
      settings.fields().forEachRemaining(e -> context.out().println(e.getKey() + " = " + e.getValue()));
      return 0;
    }
  }

  @Command(name = "set", mixinStandardHelpOptions = true, description = "Set one setting.")
  static final class Set extends UserCommand {
    @Parameters(index = "0", paramLabel = "KEY", description = "the setting")
    String key;

    @Parameters(index = "1", paramLabel = "VALUE",
        description = "its value: JSON (true, 3, \"a\", {...}); anything else is taken as a string")
    String value;

    Set(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      JsonNode parsed;
      try {
        parsed = Json.MAPPER.readTree(value);
      } catch (JsonProcessingException e) {
        parsed = null;
      }
      JsonNode json = parsed == null || parsed.isMissingNode() ? Json.MAPPER.getNodeFactory().textNode(value)
          : parsed;
      JsonNode answer = ClientSupport.await(session(vertx, user).request("SetUserSetting",
          ShineClient.object().put("key", key).set("value", json)));
      print(answer, key + " = " + json);
      return 0;
    }
  }
}
