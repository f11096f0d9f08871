package org.zrm.backup.vfs.internal.watermark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BoundedLineReaderTest {

    private static BoundedLineReader reader(String text, int max) {
        return new BoundedLineReader(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), max);
    }

    @Test
    void readsLinesUpToTheBound() throws IOException {
        BoundedLineReader r = reader("ab\r\n\nabcd\n", 4);
        assertEquals("ab", r.readLine(), "CRLF ends a line too");
        assertEquals("", r.readLine());
        assertEquals("abcd", r.readLine(), "exactly the bound");
        assertNull(r.readLine());
    }

    @Test
    void theBoundIsInBytes() throws IOException {
        BoundedLineReader r = reader("ü€\nabcdef\nok\nlast", 5);
        assertEquals("ü€", r.readLine());
        assertThrows(BoundedLineReader.LineTooLongException.class, r::readLine);
        r.skipLine();
        assertEquals("ok", r.readLine());
        assertEquals("last", r.readLine(), "a final line without terminator");
        assertNull(r.readLine());
    }

    @Test
    void aLineLongerThanTheBufferIsAssembled() throws IOException {
        String longLine = "x".repeat(20_000);
        BoundedLineReader r = reader(longLine + "\ny\n", 20_000);
        assertEquals(longLine, r.readLine());
        assertEquals("y", r.readLine());
        assertNull(r.readLine());
    }

    @Test
    void skippingAtEndOfStreamReturns() throws IOException {
        BoundedLineReader r = reader("x".repeat(100), 10);
        assertThrows(BoundedLineReader.LineTooLongException.class, r::readLine);
        r.skipLine();
        assertNull(r.readLine());
    }
}
