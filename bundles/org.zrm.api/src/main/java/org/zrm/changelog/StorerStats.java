package org.zrm.changelog;

/**
 * Counters of a storer's writer, for logs and benchmarks.
 *
 * @param groups database transactions committed
 * @param transactions upstream transactions stored
 * @param rows change-log rows written
 * @param largestGroup most upstream transactions in one database transaction
 */
public record StorerStats(long groups, long transactions, long rows, long largestGroup) {
}
