package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SecretMaskerTest {
    @Test
    void masksThePasswordOfAConnectionUrl() {
        assertEquals("postgresql://user:****@host:5432/db", SecretMasker.mask("ZERO_UPSTREAM_DB", "postgresql://user:s3cret@host:5432/db"));
        assertEquals("postgresql://user:****@host/db", SecretMasker.maskUrl("postgresql://user:p@ss:w0rd@host/db"));
        assertEquals("postgres://user:****@host/db?sslmode=disable", SecretMasker.maskUrl("postgres://user:x@host/db?sslmode=disable"));
    }

    @Test
    void leavesUrlsWithoutPasswordsAlone() {
        for (String url : new String[] {"postgresql://postgres@127.0.0.1:5432/zrm", "postgresql://host:5432/db", "s3://bucket/path", "4849"}) {
            assertEquals(url, SecretMasker.maskUrl(url));
        }
    }

    @Test
    void masksPasswordQueryParametersAndUrlsInsideLongerText() {
        assertEquals("postgresql://h/db?user=u&password=****&ssl=true", SecretMasker.maskUrl("postgresql://h/db?user=u&password=pw&ssl=true"));
        assertEquals("java -Ddb=postgresql://u:****@h/d -Xmx1g", SecretMasker.maskUrl("java -Ddb=postgresql://u:pw@h/d -Xmx1g"));
    }

    @Test
    void masksVariablesFlaggedSecretEntirely() {
        assertEquals(SecretMasker.MASK, SecretMasker.mask("ZERO_ADMIN_PASSWORD", "hunter2"));
        assertEquals("zero", SecretMasker.mask("ZERO_APP_ID", "zero"));
    }
}
