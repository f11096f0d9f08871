/** Watermarks: Postgres LSNs and Zero's lexicographically sortable version strings. */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.zrm.watermark;
