package org.zrm.weavingscope.internal;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.logging.Logger;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.hooks.bundle.EventHook;
import org.osgi.framework.hooks.bundle.FindHook;

/**
 * Registers {@link MediatorScope} before the mediator starts (this bundle is alone at start
 * level 1).
 *
 * <p>Framework properties: {@value #HIDDEN} lists the symbolic names to hide, comma-separated (an
 * empty value hides nothing; unset means {@link #DEFAULT_HIDDEN}); {@value #MEDIATOR} names the
 * mediator (default {@link #DEFAULT_MEDIATOR}). It logs through {@code java.util.logging}, which is
 * all there is this early: SLF4J binds to logback only once SPI Fly runs.
 */
public final class Activator implements BundleActivator {

    /** Framework property: the bundles hidden from the mediator. */
    static final String HIDDEN = "zrm.weavingscope.hidden";
    /** Framework property: the mediator's symbolic name. */
    static final String MEDIATOR = "zrm.weavingscope.mediator";
    static final String DEFAULT_HIDDEN = "org.apache.felix.http.jetty12,org.eclipse.jetty.xml";
    static final String DEFAULT_MEDIATOR = "org.apache.aries.spifly.dynamic.bundle";

    private static final Logger LOG = Logger.getLogger(Activator.class.getName());

    private ServiceRegistration<?> registration;

    @Override
    public void start(BundleContext context) {
        MediatorScope scope = scope(context.getProperty(MEDIATOR), context.getProperty(HIDDEN));
        if (scope.hidden().isEmpty()) {
            LOG.fine("weaving scope: nothing hidden from the ServiceLoader mediator");
            return;
        }
        registration = context.registerService(new String[] {FindHook.class.getName(), EventHook.class.getName()},
                scope, null);
        LOG.fine(() -> "weaving scope: hidden from the ServiceLoader mediator: " + scope.hidden());
    }

    /** Builds the scope from the two framework properties; {@code null} means unset. */
    static MediatorScope scope(String mediator, String hidden) {
        Set<String> names = new LinkedHashSet<>();
        for (String n : (hidden == null ? DEFAULT_HIDDEN : hidden).split(",")) {
            if (!n.isBlank()) {
                names.add(n.strip());
            }
        }
        return new MediatorScope(mediator == null || mediator.isBlank() ? DEFAULT_MEDIATOR : mediator.strip(), names);
    }

    @Override
    public void stop(BundleContext context) {
        if (registration != null) {
            registration.unregister(); // the mediator sees the bundles again from here on
            registration = null;
        }
    }
}
