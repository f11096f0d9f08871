/**
 * Shared by the fuzz properties of every module: {@link org.zrm.testing.fuzz.FuzzTries} scales a
 * property's tries by {@code -Dzrm.fuzz.scale}, so that the normal build runs each fuzzer for
 * seconds and an opt-in run (docs/RELIABILITY.md) runs the same properties for longer.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.zrm.testing.fuzz;
