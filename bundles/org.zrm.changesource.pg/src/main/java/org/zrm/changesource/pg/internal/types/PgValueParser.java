package org.zrm.changesource.pg.internal.types;

/**
 * Converts one value in Postgres text output format (as sent by pgoutput and text COPY) into its
 * Java value. Implementations are stateless and thread-safe.
 */
@FunctionalInterface
public interface PgValueParser {

    /**
     * @param text the value's text representation, never {@code null} (SQL NULL is handled by the
     *     caller)
     * @return the converted value; see {@link PgValueParsers} for the representation
     * @throws PgValueFormatException if the text cannot be parsed for this type
     */
    Object parse(String text);
}
