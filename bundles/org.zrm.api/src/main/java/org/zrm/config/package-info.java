/**
 * zero-cache's configuration conventions shared by every ZRM component, e.g. how a
 * {@code ZERO_UPSTREAM_DB} / {@code ZERO_CHANGE_DB} connection URI is read, and how a configured
 * command line is split into words, and the shared node identity ({@link NodeIdentity}); and the
 * {@link ConfigValidator} contract through which a component adds its own rules to the validation
 * of its configuration.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.3.0")
package org.zrm.config;
