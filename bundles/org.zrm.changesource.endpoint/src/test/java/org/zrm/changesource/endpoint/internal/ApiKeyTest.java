package org.zrm.changesource.endpoint.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ApiKeyTest {

    @Test
    void matchesOnlyTheExactKey() {
        ApiKey key = new ApiKey("s3cret");
        assertTrue(key.matches("s3cret"));
        assertFalse(key.matches("s3cre"));
        assertFalse(key.matches("s3cret "));
        assertFalse(key.matches("S3CRET"));
        assertFalse(key.matches(""));
        assertFalse(key.matches(null));
    }

    @Test
    void neverRendersTheSecretAndRefusesAnEmptyOne() {
        assertEquals("****", new ApiKey("s3cret").toString());
        assertThrows(IllegalArgumentException.class, () -> new ApiKey(""));
    }
}
