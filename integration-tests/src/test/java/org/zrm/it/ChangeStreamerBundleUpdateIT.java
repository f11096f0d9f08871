package org.zrm.it;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * Issue #5 scenario: the storer bundle and then the Postgres change-source bundle are updated
 * while rows are written upstream; the replica and the change log end up exact (see
 * {@link BundleUpdateScenario}).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ChangeStreamerBundleUpdateIT extends BundleUpdateScenario {

    @Test
    public void updatingStorerThenChangeSourceUnderWritesLosesAndDuplicatesNothing() throws Exception {
        updateUnderWrites("org.zrm.storer", "org.zrm.changesource.pg");
    }
}
