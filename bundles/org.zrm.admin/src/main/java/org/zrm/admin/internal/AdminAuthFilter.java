package org.zrm.admin.internal;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.servlet.whiteboard.propertytypes.HttpWhiteboardFilterPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Guards the operator endpoints ({@code /status}, {@code /metrics} and the status page) with
 * {@code ZERO_ADMIN_PASSWORD} when one is configured (PID {@value #PID}): a request without it gets
 * 401 and no data. The health checks ({@code /}, {@code /keepalive}) and the replication endpoints
 * stay open; the latter are guarded by the change streamer's address allow-list.
 */
@Component(service = Filter.class, configurationPid = AdminAuthFilter.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = AdminAuthFilter.Config.class)
@HttpWhiteboardFilterPattern({"/status", "/metrics", "/ui/*", "/ui"})
public final class AdminAuthFilter implements Filter {

    static final String PID = "org.zrm.admin.auth";
    private static final Logger LOG = LoggerFactory.getLogger(AdminAuthFilter.class);
    /** Addresses already logged; bounded, cleared when full (a flood then logs again, once per address). */
    private static final int MAX_LOGGED = 1024;

    @ObjectClassDefinition(name = "ZRM admin endpoints",
            description = "Password of /status, /metrics and the status page (ZERO_ADMIN_PASSWORD).")
    @interface Config {
        @AttributeDefinition(name = "password", type = org.osgi.service.metatype.annotations.AttributeType.PASSWORD,
                required = false, description = "Empty: the endpoints are open.")
        String password() default "";
    }

    private final AdminPassword password;
    private final ConcurrentHashMap<String, Boolean> logged = new ConcurrentHashMap<>();

    @Activate
    public AdminAuthFilter(Config config) {
        this.password = new AdminPassword(config.password());
        LOG.info("admin endpoints (/status, /metrics, /ui/): {}",
                password.required() ? "password required (ZERO_ADMIN_PASSWORD)" : "open (no ZERO_ADMIN_PASSWORD set)");
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest http = (HttpServletRequest) request;
        if (password.permits(http.getHeader("Authorization"))) {
            chain.doFilter(request, response);
            return;
        }
        String address = http.getRemoteAddr();
        if (logged.size() >= MAX_LOGGED) {
            logged.clear();
        }
        if (logged.putIfAbsent(address, Boolean.TRUE) == null) {
            LOG.warn("admin endpoints: refused {} from {}: missing or wrong admin password", http.getRequestURI(), address);
        }
        HttpServletResponse out = (HttpServletResponse) response;
        out.setHeader("WWW-Authenticate", "Basic realm=\"zrm\", charset=\"UTF-8\"");
        out.setHeader("Cache-Control", "no-store");
        out.sendError(HttpServletResponse.SC_UNAUTHORIZED);
    }
}
