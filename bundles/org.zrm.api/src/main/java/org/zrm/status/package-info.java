/**
 * Operator status: bundles contribute named sections to {@code GET /status} and
 * {@code zrm:status} by registering a {@link org.zrm.status.StatusContributor} service, and
 * metrics to {@code GET /metrics} by registering a {@link org.zrm.status.MetricsContributor}.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.2.0")
package org.zrm.status;
