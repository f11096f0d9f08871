package org.zrm.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class CommandLineTest {

    @Test
    void splitsOnWhitespaceWithQuotesGrouping() {
        assertEquals(List.of("/bin/sh", "/opt/my reader.sh", "respond"),
                CommandLine.split("  /bin/sh '/opt/my reader.sh'\trespond "));
        assertEquals(List.of("java", "-Dx=a b", "-cp", "a:b", "Main", ""),
                CommandLine.split("java -Dx=\"a b\" -cp a:b Main ''"));
        assertEquals(List.of(), CommandLine.split("   "));
        assertEquals(List.of(), CommandLine.split(null));
    }

    @Test
    void rejectsAnUnterminatedQuote() {
        assertEquals("unterminated ' quote in command line: sh 'x",
                assertThrows(IllegalArgumentException.class, () -> CommandLine.split("sh 'x")).getMessage());
    }
}
