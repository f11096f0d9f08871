package org.zrm.example.jsonl;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.BackfillRequest;

/**
 * Registers {@link JsonlChangeSource} as a {@link ChangeSource} with {@code zrm.changesource.type=jsonl}.
 *
 * <p><b>SPI obligation: registration.</b> The service property {@link ChangeSource#TYPE} is what
 * the change streamer's {@code changeSource.target} filter selects. The component is only there
 * once its configuration exists ({@code REQUIRE}), and activation does no I/O: the change
 * streamer calls {@link #initialize(boolean)} on its own thread, and that is where the directory
 * is read. Deactivation (configuration deleted, bundle updated or stopped) calls {@link #stop()},
 * which ends an open stream at once; the streamer then waits for a source again.
 *
 * <p>One configuration PID with a {@code @Designate}d, typed configuration ({@link JsonlConfig}).
 * ZRM's own components also read the shared node identity ({@code org.zrm.identity}) as a second
 * PID, but a {@code @Designate} needs exactly one; so {@code app.id}, {@code shard.num} and
 * {@code replica.file} are repeated in this PID's file (interpolated from the same environment
 * variables, see docs/CHANGE-SOURCES.md).
 */
@Component(service = ChangeSource.class, configurationPid = JsonlChangeSourceComponent.PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE, property = ChangeSource.TYPE + "=jsonl")
@Designate(ocd = JsonlConfig.class)
public final class JsonlChangeSourceComponent implements ChangeSource {

    /** The configuration PID, {@value}. */
    public static final String PID = "org.zrm.example.jsonl";

    private final JsonlChangeSource source;

    /** @param c the configuration */
    @Activate
    public JsonlChangeSourceComponent(JsonlConfig c) {
        if (c.directory() == null || c.directory().isBlank()) {
            throw new IllegalArgumentException(PID + ": directory must be set");
        }
        source = new JsonlChangeSource(new JsonlChangeSource.Settings(Path.of(c.directory()), c.app_id(),
                c.shard_num(), Path.of(c.replica_file()), c.maxLineBytes(), Duration.ofMillis(c.recheckIntervalMs())));
    }

    @Deactivate
    void deactivate() {
        source.stop();
    }

    @Override
    public SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException {
        return source.initialize(resetReplica);
    }

    @Override
    public OptionalLong startLagReporter() {
        return source.startLagReporter();
    }

    @Override
    public ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException, InterruptedException {
        return source.startStream(afterWatermark, backfillRequests);
    }

    @Override
    public void stop() {
        source.stop();
    }
}
