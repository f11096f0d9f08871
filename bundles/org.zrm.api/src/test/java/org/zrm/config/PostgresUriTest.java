package org.zrm.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class PostgresUriTest {

    @Test
    void uriBecomesJdbcUrlAndCredentials() {
        PostgresUri u = PostgresUri.parse("postgresql://zero:p%40ss:w+1@127.0.0.1:6432/my_db?sslmode=disable", "change.db");
        assertEquals("jdbc:postgresql://127.0.0.1:6432/my_db", u.jdbcUrl());
        assertEquals("zero", u.user());
        assertEquals("p@ss:w+1", u.password());
        assertEquals("disable", u.connectionProperties().getProperty("sslmode"));
        assertEquals("p@ss:w+1", u.connectionProperties().getProperty("password"));
        assertFalse(u.toString().contains("p@ss"));
    }

    @Test
    void defaultsFollowLibpq() {
        assertEquals("jdbc:postgresql://h:5432/postgres", PostgresUri.parse("postgres://h", "x").jdbcUrl());
        assertEquals("jdbc:postgresql://h:5432/alice", PostgresUri.parse("postgres://alice@h", "x").jdbcUrl());
        assertEquals("jdbc:postgresql://[::1]:5432/db", PostgresUri.parse("postgres://[::1]/db", "x").jdbcUrl());
    }

    @Test
    void sslFollowsZeroCache() {
        assertEquals("disable", PostgresUri.parse("postgres://h/db?ssl=false", "x").sslMode());
        assertEquals("require", PostgresUri.parse("postgres://h/db?sslmode=no-verify", "x").sslMode());
        assertEquals("prefer", PostgresUri.parse("postgres://h/db?sslmode=verify-full", "x").sslMode());
        assertEquals("prefer", PostgresUri.parse("postgres://h/db", "x").sslMode());
    }

    @Test
    void otherParametersPassToPgjdbcAndJdbcUrlsAreTakenAsTheyAre() {
        assertEquals("jdbc:postgresql://h:5432/db?connectTimeout=3&sslfactory=x",
                PostgresUri.parse("postgres://h/db?connectTimeout=3&sslmode=disable&sslfactory=x", "x").jdbcUrl());
        PostgresUri jdbc = PostgresUri.parse("jdbc:postgresql://h/db?user=u", "x");
        assertEquals("jdbc:postgresql://h/db?user=u", jdbc.jdbcUrl());
        assertNull(jdbc.sslMode());
        assertTrue(jdbc.connectionProperties().isEmpty());
    }

    @Test
    void badUrisNameTheSettingAndMaskThePassword() {
        for (String bad : List.of("", "http://u:secret@h/db", "postgresql://u:secret@/db", "postgresql://u:secret@h:x/db",
                "not a uri at all")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PostgresUri.parse(bad, "upstream.db"), bad);
            assertTrue(e.getMessage().startsWith("upstream.db "), e.getMessage());
            assertFalse(e.getMessage().contains("secret"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> PostgresUri.parse(null, "upstream.db"));
    }
}
