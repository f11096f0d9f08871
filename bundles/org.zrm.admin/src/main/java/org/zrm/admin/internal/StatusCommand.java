package org.zrm.admin.internal;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** Gogo command {@code zrm:status}: the same information as {@code GET /status}, as text. */
@Component(service = StatusCommand.class, immediate = true,
        property = {"osgi.command.scope=zrm", "osgi.command.function=status"})
public final class StatusCommand {

    private final StatusSource source;

    @Activate
    public StatusCommand(@Reference StatusSource source) {
        this.source = source;
    }

    /** Invoked by Gogo; the returned text is printed as is. */
    public String status() {
        return StatusText.render(source.status());
    }
}
