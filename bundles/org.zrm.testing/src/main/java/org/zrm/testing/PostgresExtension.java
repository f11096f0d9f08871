package org.zrm.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.zrm.pgcluster.PgCluster;

/**
 * JUnit 5 extension for Postgres-backed tests.
 *
 * <p>Resolves parameters (of constructors, lifecycle and test methods) of type:
 * <ul>
 *   <li>{@link PgCluster}: the cluster of this test run. It is started on first use and kept in
 *       the <em>root</em> context's store, so every test class of the run shares it; JUnit closes
 *       it (stop, delete the folder) when the run ends.</li>
 *   <li>{@link PgDatabase}: a fresh database for the test class (each {@code @Nested} class counts
 *       as a class), kept in the class context's store and dropped after the class.</li>
 * </ul>
 * The store is JUnit's idiomatic home for such resources: no static state, safe under parallel
 * execution ({@code getOrComputeIfAbsent} is atomic per store).
 */
public final class PostgresExtension implements ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(PostgresExtension.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == PgCluster.class || type == PgDatabase.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        if (type == PgCluster.class) {
            return cluster(context);
        }
        if (type == PgDatabase.class) {
            return database(context);
        }
        throw new ParameterResolutionException("PostgresExtension cannot resolve " + type);
    }

    /** @return the run's cluster, starting it on first use */
    static PgCluster cluster(ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE)
                .getOrComputeIfAbsent(ClusterResource.class, key -> new ClusterResource(TestPostgres.clusterBuilder().start()),
                        ClusterResource.class)
                .cluster;
    }

    /** @return the database of the class that {@code context} belongs to, creating it on first use */
    static PgDatabase database(ExtensionContext context) {
        ExtensionContext classContext = context;
        // Method (and test-template invocation) contexts sit below the class context.
        while (classContext.getTestMethod().isPresent() && classContext.getParent().isPresent()) {
            classContext = classContext.getParent().get();
        }
        String prefix = classContext.getTestClass().map(Class::getSimpleName).orElse("test");
        PgCluster cluster = cluster(context);
        return classContext.getStore(NAMESPACE)
                .getOrComputeIfAbsent(DatabaseResource.class, key -> new DatabaseResource(PgDatabase.create(cluster, prefix)),
                        DatabaseResource.class)
                .database;
    }

    /** Closes the cluster when the root context (the whole run) is closed. */
    private static final class ClusterResource implements ExtensionContext.Store.CloseableResource {
        final PgCluster cluster;

        ClusterResource(PgCluster cluster) {
            this.cluster = cluster;
        }

        @Override
        public void close() {
            cluster.close();
        }
    }

    /** Drops the class's database when the class context is closed. */
    private static final class DatabaseResource implements ExtensionContext.Store.CloseableResource {
        final PgDatabase database;

        DatabaseResource(PgDatabase database) {
            this.database = database;
        }

        @Override
        public void close() {
            database.close();
        }
    }
}
