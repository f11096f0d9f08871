package org.zrm.weavingscope.internal;

import java.util.Collection;
import java.util.Set;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.hooks.bundle.EventHook;
import org.osgi.framework.hooks.bundle.FindHook;

/**
 * Hides some bundles from one bundle, the ServiceLoader mediator (Aries SPI Fly), and from no
 * other.
 *
 * <p>Why: SPI Fly decides which bundles to weave from their manifests alone. A bundle that merely
 * <em>allows</em> mediation (an optional {@code osgi.serviceloader.processor} requirement, as Felix
 * HTTP's Jetty bundle and {@code jetty-xml} declare) gets every class it loads rewritten with ASM
 * and its stack frames recomputed, whether or not the class calls {@code ServiceLoader}. In ZRM's
 * runtime those two bundles need no mediation (they find what they use on their own class path,
 * and ZRM serves plain HTTP/1.1), and weaving them was about 0.15 s of every start on a
 * two-core machine (docs/BENCHMARKS.md, session 17). SPI Fly learns of bundles only through its
 * bundle tracker, so a bundle it cannot find or hear of is neither woven nor registered as a
 * provider; the framework, SCR and every other bundle still see it.
 *
 * <p>The hooks are the OSGi core's own isolation mechanism ({@link FindHook}, {@link EventHook});
 * they must be registered before the mediator starts.
 */
final class MediatorScope implements FindHook, EventHook {

    private final String mediator;
    private final Set<String> hidden;

    /**
     * @param mediator the mediator's bundle symbolic name
     * @param hidden symbolic names of the bundles it must not see
     */
    MediatorScope(String mediator, Set<String> hidden) {
        this.mediator = mediator;
        this.hidden = Set.copyOf(hidden);
    }

    @Override
    public void find(BundleContext context, Collection<Bundle> bundles) {
        if (isMediator(context)) {
            bundles.removeIf(b -> hidden.contains(b.getSymbolicName()));
        }
    }

    @Override
    public void event(BundleEvent event, Collection<BundleContext> contexts) {
        if (hidden.contains(event.getBundle().getSymbolicName())) {
            contexts.removeIf(this::isMediator);
        }
    }

    private boolean isMediator(BundleContext context) {
        return mediator.equals(context.getBundle().getSymbolicName());
    }

    /** @return the symbolic names hidden from the mediator */
    Set<String> hidden() {
        return hidden;
    }
}
