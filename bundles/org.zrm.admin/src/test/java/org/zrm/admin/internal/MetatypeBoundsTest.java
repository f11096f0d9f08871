package org.zrm.admin.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MetatypeBoundsTest {

    /** The shape bnd writes for an {@code @ObjectClassDefinition(pid = ...)} with {@code @Designate}. */
    private static final String XML = """
            <?xml version="1.0" encoding="UTF-8"?>
            <metatype:MetaData xmlns:metatype="http://www.osgi.org/xmlns/metatype/v1.2.0">
              <OCD id="org.zrm.storer.internal.StorerConfig" name="storer">
                <AD id="change.db" type="Password"/>
                <AD id="change.logBatchSize" type="Integer" min="1" default="2000"/>
                <AD id="change.groupCommit.maxDelayMs" type="Long" min="0" max="1000"/>
              </OCD>
              <OCD id="other.Config" name="other">
                <AD id="change.logBatchSize" type="Integer" min="50"/>
              </OCD>
              <Designate pid="org.zrm.storer">
                <Object ocdref="org.zrm.storer.internal.StorerConfig"/>
              </Designate>
              <Designate factoryPid="org.zrm.other">
                <Object ocdref="other.Config"/>
              </Designate>
            </metatype:MetaData>
            """;

    private static Map<String, MetatypeBounds.Bounds> read(String xml, String pid) throws IOException {
        return MetatypeBounds.read(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)), pid);
    }

    @Test
    void readsTheBoundsOfTheDesignatedOcdOnly() throws IOException {
        Map<String, MetatypeBounds.Bounds> storer = read(XML, "org.zrm.storer");
        assertEquals(Map.of("change.logBatchSize", new MetatypeBounds.Bounds("1", null),
                "change.groupCommit.maxDelayMs", new MetatypeBounds.Bounds("0", "1000")), storer);
        assertEquals(Map.of("change.logBatchSize", new MetatypeBounds.Bounds("50", null)), read(XML, "org.zrm.other"));
        assertTrue(read(XML, "org.zrm.nobody").isEmpty());
    }

    @Test
    void aBrokenOrHostileResourceIsAnErrorNotAGuess() {
        IOException broken = assertThrows(IOException.class, () -> read("<MetaData><OCD", "p"));
        assertTrue(broken.getMessage().startsWith("not a readable metatype resource"), broken.getMessage());
        // No DTDs: an entity could otherwise read local files into a bound.
        assertThrows(IOException.class, () -> read("<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>"
                + "<MetaData><OCD id=\"o\"><AD id=\"a\" min=\"&e;\"/></OCD></MetaData>", "p"));
    }
}
