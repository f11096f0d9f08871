package org.zrm.changestreamer.internal;

import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.zrm.changesource.ChangeSource;

/**
 * Binds the change source named by {@code changeSource.target} in the change streamer's
 * configuration (PID {@value ChangeStreamerComponent#PID}), and offers it to the streamer as a
 * {@link SelectedChangeSource}.
 *
 * <p>Why a component of its own: the reference must be mandatory, so that a target nothing matches
 * makes a component unsatisfied (SCR then reports the reference and its filter, and
 * {@code /status} turns unhealthy). If the streamer held that mandatory reference, every update of
 * the source bundle would deactivate the streamer, disconnecting every subscriber and restarting
 * the backup coordinator. This component has no state, so its deactivation costs nothing; the
 * streamer follows it through an optional dynamic reference and resumes from the change log.
 *
 * <p>The reference is static and greedy: a better-ranked source of the same type replaces the
 * bound one (DS's usual rule: highest {@code service.ranking}, then the oldest service).
 */
@Component(service = SelectedChangeSource.class, configurationPid = ChangeStreamerComponent.PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE)
public final class ChangeSourceSelection implements SelectedChangeSource {

    private final ChangeSource source;
    private final String type;

    @Activate
    public ChangeSourceSelection(
            @Reference(name = ChangeStreamerComponent.SOURCE_REFERENCE, service = ChangeSource.class,
                    target = ChangeStreamerComponent.DEFAULT_SOURCE_TARGET, policyOption = ReferencePolicyOption.GREEDY)
            Map.Entry<Map<String, ?>, ChangeSource> source) {
        this.source = source.getValue();
        this.type = String.valueOf(source.getKey().get(ChangeSource.TYPE));
    }

    @Override
    public ChangeSource source() {
        return source;
    }

    @Override
    public String type() {
        return type;
    }
}
