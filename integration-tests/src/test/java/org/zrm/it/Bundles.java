package org.zrm.it;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

/** Finding the runtime's bundles from inside a Pax Exam test. */
final class Bundles {

    private Bundles() {}

    /**
     * @return the installed bundle with {@code symbolicName}
     * @throws AssertionError if none is installed
     */
    static Bundle named(BundleContext context, String symbolicName) {
        for (Bundle b : context.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new AssertionError(symbolicName + " is not installed");
    }
}
