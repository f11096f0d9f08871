/**
 * Keeping secrets out of log lines and printed configuration. Every ZRM component that prints a
 * connection string or a configuration value passes it through {@link org.zrm.secret.Secrets}.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.1")
package org.zrm.secret;
