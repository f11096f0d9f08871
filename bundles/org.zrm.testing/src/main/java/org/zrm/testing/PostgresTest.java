package org.zrm.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a JUnit 5 test class as Postgres-backed: registers {@link PostgresExtension} (which
 * resolves {@link PgDatabase} and {@link org.zrm.pgcluster.PgCluster} parameters) and tags it
 * {@code pg}, so that a build can include or exclude such tests.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag("pg")
@ExtendWith(PostgresExtension.class)
public @interface PostgresTest {
}
