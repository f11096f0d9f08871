/**
 * Operator actions the shell ({@code org.zrm.shell}) performs on running components: closing a
 * subscriber, a dry run of the next change-log purge, dropping an orphaned replication slot. The
 * figures the shell shows come from the {@link org.zrm.status.StatusContributor} sections; this
 * package holds only what changes state or needs the database on demand.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.zrm.operator;
