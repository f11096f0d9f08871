/**
 * Applying change-stream transactions to a replica (not exported): the change processor and its
 * schema-change half, shared by the stream-fed initial sync.
 */
package org.zrm.replica.internal.apply;
