package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class CliTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final List<List<String>> calls = new ArrayList<>();

    private final Command run = command("run", (args) -> {
        calls.add(args);
        return 0;
    });
    private final Command fails = command("bench", (args) -> {
        throw new LaunchException("no workload " + args);
    });
    private final Cli cli = new Cli(List.of(run, fails, new EnvCommand(new PrintStream(out, true, StandardCharsets.UTF_8))), "run",
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

    @Test
    void noArgumentsRunsTheDefaultCommand() {
        assertEquals(0, cli.run(new String[0]));
        assertEquals(List.of(List.of()), calls);
        assertEquals(0, cli.run(new String[] {"run"}));
    }

    @Test
    void unknownCommandsAreRejectedWithTheKnownOnes() {
        assertEquals(Cli.USAGE_ERROR, cli.run(new String[] {"frobnicate"}));
        assertEquals("zrm: unknown command 'frobnicate'; known commands: run, bench, env, help\n", text(err));
        assertEquals(List.of(), calls);
    }

    @Test
    void helpListsEveryCommand() {
        assertEquals(0, cli.run(new String[] {"help"}));
        String usage = text(out);
        assertTrue(usage.startsWith("Usage: ./zrm [command] [arguments]"), usage);
        assertTrue(usage.contains("  run                  does run (default)"), usage);
        assertTrue(usage.contains("  bench <x>            does bench"), usage);
        assertTrue(usage.contains("  env "), usage);
    }

    @Test
    void launchFailuresBecomeOneLineAndExitCodeOne() {
        assertEquals(Cli.FAILURE, cli.run(new String[] {"bench", "w1"}));
        assertEquals("zrm: error: no workload [w1]\n", text(err));
    }

    @Test
    void envListsTheRegistry() {
        assertEquals(0, cli.run(new String[] {"env"}));
        assertTrue(text(out).contains("ZERO_APP_ID"), text(out));
        assertTrue(text(out).contains("ZERO_ADMIN_PASSWORD") && text(out).contains("(secret)"), text(out));
    }

    private interface Body {
        int run(List<String> args);
    }

    private static Command command(String name, Body body) {
        return new Command() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public String arguments() {
                return name.equals("bench") ? "<x>" : "";
            }

            @Override
            public String summary() {
                return "does " + name;
            }

            @Override
            public int run(List<String> args) {
                return body.run(args);
            }
        };
    }

    private static String text(ByteArrayOutputStream s) {
        return s.toString(StandardCharsets.UTF_8);
    }
}
