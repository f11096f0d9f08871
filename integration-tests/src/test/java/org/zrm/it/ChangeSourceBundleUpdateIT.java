package org.zrm.it;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * The change-source half of the issue #5 scenario on its own: the Postgres change-source bundle is
 * updated while the change streamer streams and rows are written upstream; the streamer swaps to
 * the new source and the replica and the change log end up exact (see {@link BundleUpdateScenario}).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ChangeSourceBundleUpdateIT extends BundleUpdateScenario {

    @Test
    public void updatingChangeSourceWhileStreamingLosesAndDuplicatesNothing() throws Exception {
        updateUnderWrites("org.zrm.changesource.pg");
    }
}
