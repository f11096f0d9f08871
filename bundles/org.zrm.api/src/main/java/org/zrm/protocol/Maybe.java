package org.zrm.protocol;

import java.util.Objects;

/**
 * An optional member that may also be JSON {@code null}: three states, <em>absent</em> (member
 * omitted), <em>null</em> (member present with value {@code null}) and <em>value</em>. Used where
 * upstream declares a member as {@code .nullable().optional()}, e.g. {@link ColumnSpec#dflt()}.
 *
 * @param <T> the value type
 */
public final class Maybe<T> {

    private static final Maybe<?> ABSENT = new Maybe<>(false, null);
    private static final Maybe<?> NULL = new Maybe<>(true, null);

    private final boolean present;
    private final T value;

    private Maybe(boolean present, T value) {
        this.present = present;
        this.value = value;
    }

    /** The member is omitted. */
    @SuppressWarnings("unchecked")
    public static <T> Maybe<T> absent() {
        return (Maybe<T>) ABSENT;
    }

    /** The member is present with JSON {@code null}. */
    @SuppressWarnings("unchecked")
    public static <T> Maybe<T> ofNull() {
        return (Maybe<T>) NULL;
    }

    /** The member is present with a non-null value. */
    public static <T> Maybe<T> of(T value) {
        return new Maybe<>(true, Objects.requireNonNull(value, "value"));
    }

    /** Present with {@code value}, or present-null if {@code value} is {@code null}. */
    public static <T> Maybe<T> ofNullable(T value) {
        return value == null ? ofNull() : of(value);
    }

    /** Whether the member is present (with a value or {@code null}). */
    public boolean isPresent() {
        return present;
    }

    /** Whether the member is present with JSON {@code null}. */
    public boolean isNull() {
        return present && value == null;
    }

    /** The value; {@code null} when absent or present-null. */
    public T value() {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Maybe<?> m && present == m.present && Objects.equals(value, m.value);
    }

    @Override
    public int hashCode() {
        return present ? Objects.hashCode(value) + 1 : 0;
    }

    @Override
    public String toString() {
        return !present ? "absent" : String.valueOf(value);
    }
}
