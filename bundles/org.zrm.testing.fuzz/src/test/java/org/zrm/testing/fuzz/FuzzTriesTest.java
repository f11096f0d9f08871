package org.zrm.testing.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Example;

class FuzzTriesTest {

    @Example
    void normalBuildRunsAFixedSeedPerProperty() {
        String a = FuzzTries.seedFor(null, 1, "org.x.ATest#p");
        assertEquals(a, FuzzTries.seedFor(null, 1, "org.x.ATest#p"), "same property, same seed");
        assertNotEquals(a, FuzzTries.seedFor(null, 1, "org.x.ATest#q"), "another property, another seed");
        assertTrue(Long.parseLong(a) >= 0, a);
    }

    @Example
    void scaledRunDrawsRandomSeeds() {
        assertNull(FuzzTries.seedFor(null, 50, "org.x.ATest#p"));
        assertNull(FuzzTries.seedFor("random", 1, "org.x.ATest#p"));
        assertNull(FuzzTries.seedFor("RANDOM", 50, "org.x.ATest#p"));
    }

    @Example
    void explicitSeedIsReplayedEverywhere() {
        assertEquals("42", FuzzTries.seedFor(" 42 ", 1, "org.x.ATest#p"));
        assertEquals("-7", FuzzTries.seedFor("-7", 50, "org.x.ATest#q"));
    }

    @Example
    void badSeedIsAClearError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FuzzTries.seedFor("12abc", 1, "org.x.ATest#p"));
        assertTrue(e.getMessage().contains("zrm.fuzz.seed") && e.getMessage().contains("12abc"), e.getMessage());
    }
}
