package org.zrm.secret;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by the launcher's fuzzer (docs/RELIABILITY.md): masking took time quadratic in the text's
 * length, over a second for a 5000-character value. These texts took minutes before the fix; the
 * generous bound only catches a return of the quadratic behaviour, it does not measure speed.
 */
class SecretsLinearTimeTest {

    @Test
    void longTextsAreMaskedInBoundedTime() {
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            String letters = "x".repeat(200_000);
            assertEquals(letters, Secrets.maskUrls(letters));
            String schemes = "a://".repeat(50_000);
            assertEquals(schemes, Secrets.maskUrls(schemes));
            String words = "word ".repeat(50_000) + "postgres://u:pw@h/db";
            assertEquals("word ".repeat(50_000) + "postgres://u:****@h/db", Secrets.maskUrls(words));
        });
    }

    @Test
    void oddUserInfoIsMaskedPerWord() {
        assertEquals("a postgresql://****@:5432./db b", Secrets.maskUrls("a postgresql://://us+er:pw@@:5432./db b"));
        assertEquals("  ws://****@h/x\tpostgres://u@h/db ", Secrets.maskUrls("  ws://u:p/w@h/x\tpostgres://u@h/db "));
        assertEquals("postgres://u:****@h/db", Secrets.maskUrls("postgres://u:p@ss:w0rd@h/db"));
    }
}
