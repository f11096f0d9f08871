package org.zrm.secret;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SecretsTest {

    @Test
    void passwordInConnectionUrlIsMasked() {
        assertEquals("postgresql://zero:****@db.internal:5432/app",
                Secrets.mask("upstream.db", "postgresql://zero:s3cr3t@db.internal:5432/app"));
    }

    @Test
    void passwordsContainingAtSignsAndColonsAreMaskedEntirely() {
        assertEquals("postgresql://user:****@host/db", Secrets.maskUrls("postgresql://user:p@ss:w0rd@host/db"));
        assertEquals("postgres://u:****@h/db", Secrets.maskUrls("postgres://u:p%40ss:w0rd@h/db"));
    }

    @Test
    void urlsWithoutPasswordAreUnchanged() {
        for (String url : new String[] {"postgresql://postgres@127.0.0.1:5432/zrm", "postgres://h/db?sslmode=disable",
                "http://127.0.0.1:4849/status", "ws://host:4849/replication/v6/changes?id=a&watermark=00"}) {
            assertEquals(url, Secrets.maskUrls(url));
        }
    }

    @Test
    void passwordQueryParametersAreMasked() {
        assertEquals("jdbc:postgresql://h/db?user=a&password=****&ssl=true",
                Secrets.mask("change.db", "jdbc:postgresql://h/db?user=a&password=hunter2&ssl=true"));
        assertEquals("postgres://h/db?sslpassword=****", Secrets.maskUrls("postgres://h/db?sslpassword=x"));
    }

    @Test
    void urlsInsideLongerTextAreMasked() {
        assertEquals("java -Ddb=postgresql://u:****@h/d -Xmx1g", Secrets.maskUrls("java -Ddb=postgresql://u:pw@h/d -Xmx1g"));
    }

    @Test
    void settingsNamedAsSecretsAreMaskedWhole() {
        assertEquals(Secrets.MASK, Secrets.mask("ZERO_ADMIN_PASSWORD", "hunter2"));
        assertEquals(Secrets.MASK, Secrets.mask("litestream.secretAccessKey", "abc"));
        assertEquals(Secrets.MASK, Secrets.mask("authToken", "abc"));
        assertTrue(Secrets.isSecretName("AWS_SECRET_ACCESS_KEY"));
        assertFalse(Secrets.isSecretName("ZERO_APP_ID"));
    }

    @Test
    void ordinaryValuesPassThrough() {
        assertEquals("2000", Secrets.mask("change.logBatchSize", 2000));
        assertEquals("[a, b]", Secrets.mask("app.publications", new String[] {"a", "b"}));
        assertEquals("null", Secrets.mask("x", null));
    }

    @Test
    void apiKeysAndTokensInQueryStringsAreMasked() {
        assertEquals("wss://host/changes/v0/stream?apiKey=****&appID=zero",
                Secrets.maskUrls("wss://host/changes/v0/stream?apiKey=k3y&appID=zero"));
        assertEquals("http://h/x?a=1&token=****", Secrets.maskUrls("http://h/x?a=1&token=abc"));
        assertEquals("http://h/x?access_token=****#f", Secrets.maskUrls("http://h/x?access_token=abc#f"));
        assertEquals("http://h/x?keys=1", Secrets.maskUrls("http://h/x?keys=1"));
    }
}
