package org.zrm.admin.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class AdminPasswordTest {

    private static String basic(String userAndPassword) {
        return "Basic " + Base64.getEncoder().encodeToString(userAndPassword.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void withoutAPasswordEverythingIsPermitted() {
        AdminPassword open = new AdminPassword("");
        assertFalse(open.required());
        assertTrue(open.permits(null));
        assertTrue(new AdminPassword(null).permits("Basic garbage"));
    }

    @Test
    void basicAuthWithAnyUserAndBearerTokensAreAccepted() {
        AdminPassword p = new AdminPassword("s3cr3t:pw");
        assertTrue(p.required());
        assertTrue(p.permits(basic("admin:s3cr3t:pw")), "the password may contain a colon");
        assertTrue(p.permits(basic(":s3cr3t:pw")));
        assertTrue(p.permits("Bearer s3cr3t:pw"));
        assertTrue(p.permits("bearer  s3cr3t:pw "));
    }

    @Test
    void missingWrongAndMalformedCredentialsAreRefused() {
        AdminPassword p = new AdminPassword("s3cr3t");
        assertFalse(p.permits(null));
        assertFalse(p.permits(""));
        assertFalse(p.permits(basic("admin:wrong")));
        assertFalse(p.permits(basic("admin:s3cr3")), "a prefix");
        assertFalse(p.permits(basic("admin:s3cr3tX")), "longer");
        assertFalse(p.permits(basic("s3cr3t")), "no colon: the user name, not a password");
        assertFalse(p.permits("Basic !!!notbase64"));
        assertFalse(p.permits("Bearer"));
        assertFalse(p.permits("Digest s3cr3t"));
    }
}
