/**
 * Implementation of {@link org.zrm.pgcluster.PgCluster}: child processes, OS account switching,
 * data-folder layout. Private to the bundle.
 */
package org.zrm.pgcluster.internal;
