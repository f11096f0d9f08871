package org.zrm.admin.internal;

/** Supplies the current {@link RuntimeStatus}; registered by {@link AdminComponent}. */
public interface StatusSource {
    RuntimeStatus status();
}
