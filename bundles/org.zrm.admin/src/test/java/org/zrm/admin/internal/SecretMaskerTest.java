package org.zrm.admin.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SecretMaskerTest {

    @Test
    void passwordInConnectionUrlIsMasked() {
        assertEquals("postgresql://zero:****@db.internal:5432/app",
                SecretMasker.mask("upstream.db", "postgresql://zero:s3cr3t@db.internal:5432/app"));
    }

    @Test
    void urlWithoutPasswordIsUnchanged() {
        assertEquals("postgresql://postgres@127.0.0.1:5432/zrm",
                SecretMasker.mask("upstream.db", "postgresql://postgres@127.0.0.1:5432/zrm"));
    }

    @Test
    void passwordQueryParameterIsMasked() {
        assertEquals("jdbc:postgresql://h/db?user=a&password=****&ssl=true",
                SecretMasker.mask("change.db", "jdbc:postgresql://h/db?user=a&password=hunter2&ssl=true"));
    }

    @Test
    void propertiesNamedAsSecretsAreMaskedWhole() {
        assertEquals(SecretMasker.MASK, SecretMasker.mask("admin.password", "anything"));
        assertEquals(SecretMasker.MASK, SecretMasker.mask("litestream.secretAccessKey", "abc"));
        assertEquals(SecretMasker.MASK, SecretMasker.mask("authToken", "abc"));
    }

    @Test
    void passwordsContainingSpecialCharactersAreMaskedEntirely() {
        assertEquals("postgres://u:****@h/db", SecretMasker.mask("x", "postgres://u:p%40ss:w0rd@h/db"));
    }

    @Test
    void ordinaryValuesPassThrough() {
        assertEquals("2000", SecretMasker.mask("change.logBatchSize", 2000));
        assertEquals("[a, b]", SecretMasker.mask("app.publications", new String[] {"a", "b"}));
        assertEquals("null", SecretMasker.mask("x", null));
    }
}
