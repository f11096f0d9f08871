package org.zrm.litestream.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class LogForwarderTest {

    @Test
    void levelsOfLitestreamsTextAndJsonLines() {
        assertEquals("info", LogForwarder.levelOf("time=2026-12-03T12:00:36.824Z level=INFO msg=\"initialized db\""));
        assertEquals("warn", LogForwarder.levelOf("time=x level=WARN msg=\"sync error\""));
        assertEquals("error", LogForwarder.levelOf("time=x level=ERROR msg=\"monitor error\""));
        assertEquals("debug", LogForwarder.levelOf("time=x level=DEBUG msg=x"));
        assertEquals("error", LogForwarder.levelOf("{\"time\":\"x\",\"level\":\"ERROR\",\"msg\":\"y\"}"));
        assertEquals("info", LogForwarder.levelOf("{\"level\":\"INFO\",\"msg\":\"level=ERROR inside\"}"));
        // No level: Go's panic output or usage text, printed only when something is wrong.
        assertEquals("warn", LogForwarder.levelOf("panic: runtime error"));
        assertEquals("warn", LogForwarder.levelOf("sublevel=INFO-ish"));
    }
}
