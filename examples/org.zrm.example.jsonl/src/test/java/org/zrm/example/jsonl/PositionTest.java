package org.zrm.example.jsonl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PositionTest {

    @Test
    void watermarksIncreaseStrictlyAsStringsAcrossLinesAndFiles() {
        List<Position> positions = new ArrayList<>();
        positions.add(Position.START);
        for (int file : new int[] {1, 2, 9, 10, 99, 100, 1000, Position.MAX_FILE}) {
            for (long line : new long[] {1, 2, 9, 10, 35, 36, 1295, 1296, 65_536, Position.MAX_LINE}) {
                positions.add(new Position(file, line));
            }
        }
        for (int i = 1; i < positions.size(); i++) {
            String a = positions.get(i - 1).watermark();
            String b = positions.get(i).watermark();
            assertTrue(a.compareTo(b) < 0, positions.get(i - 1) + " " + a + " must sort before " + positions.get(i) + " " + b);
        }
    }

    @Test
    void aWatermarkNamesItsPosition() {
        Position p = new Position(3, 17);
        assertEquals(p, Position.of(p.watermark()));
        assertEquals(Position.START, Position.of(Position.START.watermark()));
        assertEquals("changes-000003.jsonl:17", p.toString());
    }

    @Test
    void foreignWatermarksAndImpossiblePositionsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> Position.of("not a lexi"));
        assertThrows(IllegalArgumentException.class, () -> Position.of("0a.3z")); // a minor suffix: another source's
        assertThrows(IllegalArgumentException.class, () -> new Position(0, 5));
        assertThrows(IllegalArgumentException.class, () -> new Position(1, 0));
        assertThrows(IllegalArgumentException.class, () -> new Position(Position.MAX_FILE + 1, 1));
    }
}
