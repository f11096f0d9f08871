package org.zrm.litestream.internal;

import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;

/** {@link LitestreamConfig} instances for tests: the annotation's defaults, overridden by property name. */
final class Configs {

    private Configs() {
    }

    static LitestreamConfig of(Map<String, Object> values) {
        Map<String, Object> v = new HashMap<>(values);
        return (LitestreamConfig) Proxy.newProxyInstance(LitestreamConfig.class.getClassLoader(),
                new Class<?>[] {LitestreamConfig.class}, (proxy, method, args) -> {
                    String name = method.getName().replace('_', '.');
                    if (v.containsKey(name)) {
                        return v.get(name);
                    }
                    if (method.getDefaultValue() != null) {
                        return method.getDefaultValue();
                    }
                    return switch (method.getName()) {
                        case "annotationType" -> LitestreamConfig.class;
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        case "toString" -> "LitestreamConfig" + v;
                        default -> throw new UnsupportedOperationException(method.getName());
                    };
                });
    }
}
