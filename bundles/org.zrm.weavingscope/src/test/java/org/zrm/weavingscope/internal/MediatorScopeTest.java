package org.zrm.weavingscope.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;

class MediatorScopeTest {
    private static final String SPIFLY = "org.apache.aries.spifly.dynamic.bundle";

    private final Bundle jetty = bundle("org.apache.felix.http.jetty12");
    private final Bundle logback = bundle("ch.qos.logback.classic");
    private final BundleContext mediator = context(bundle(SPIFLY));
    private final BundleContext scr = context(bundle("org.apache.felix.scr"));
    private final MediatorScope scope = new MediatorScope(SPIFLY, Set.of("org.apache.felix.http.jetty12"));

    @Test
    void theMediatorDoesNotFindAHiddenBundleAndOthersDo() {
        List<Bundle> forMediator = new ArrayList<>(List.of(jetty, logback));
        scope.find(mediator, forMediator);
        assertEquals(List.of(logback), forMediator, "logback stays: SPI Fly registers it as SLF4J's provider");

        List<Bundle> forScr = new ArrayList<>(List.of(jetty, logback));
        scope.find(scr, forScr);
        assertEquals(List.of(jetty, logback), forScr);
    }

    @Test
    void theMediatorHearsNoEventOfAHiddenBundle() {
        List<BundleContext> listeners = new ArrayList<>(List.of(mediator, scr));
        scope.event(new BundleEvent(BundleEvent.STARTING, jetty), listeners);
        assertEquals(List.of(scr), listeners);

        List<BundleContext> forLogback = new ArrayList<>(List.of(mediator, scr));
        scope.event(new BundleEvent(BundleEvent.STARTING, logback), forLogback);
        assertEquals(List.of(mediator, scr), forLogback);
    }

    @Test
    void theFrameworkPropertiesChooseWhatIsHiddenAndFromWhom() {
        assertEquals(Set.of("org.apache.felix.http.jetty12", "org.eclipse.jetty.xml"), Activator.scope(null, null).hidden(),
                "unset: the two bundles that only allow mediation");
        assertEquals(Set.of(), Activator.scope(null, " ").hidden(), "empty: nothing");
        MediatorScope custom = Activator.scope("my.mediator", " a.b , c.d,,");
        assertEquals(Set.of("a.b", "c.d"), custom.hidden());
        List<Bundle> found = new ArrayList<>(List.of(bundle("a.b")));
        custom.find(mediator, found);
        assertEquals(1, found.size(), "SPI Fly is not the mediator named");
        custom.find(context(bundle("my.mediator")), found);
        assertEquals(0, found.size());
    }

    private static Bundle bundle(String bsn) {
        return (Bundle) Proxy.newProxyInstance(Bundle.class.getClassLoader(), new Class<?>[] {Bundle.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getSymbolicName" -> bsn;
                    case "toString" -> bsn;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private static BundleContext context(Bundle owner) {
        return (BundleContext) Proxy.newProxyInstance(BundleContext.class.getClassLoader(),
                new Class<?>[] {BundleContext.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "getBundle" -> owner;
                    case "toString" -> "context of " + owner;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
