package org.zrm.protocol.json.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

class NumberMemoTest {

    private static String viaMemo(NumberMemo memo, double v) {
        StringBuilder sb = new StringBuilder();
        memo.appendJson(sb, v);
        return sb.toString();
    }

    private static String direct(double v) {
        StringBuilder sb = new StringBuilder();
        JsNumbers.appendJson(sb, v);
        return sb.toString();
    }

    @Test
    void repeatedAndAlternatingValuesFormatExactlyLikeJsNumbers() {
        NumberMemo memo = new NumberMemo();
        double ts = 1764683912345.678; // a DEFAULT now() timestamp as epoch millis
        double[] values = {ts, ts, ts, 0.1, ts, 0.1, 0.1, -0.0, 5e-324, Double.NaN, Double.POSITIVE_INFINITY, 42, ts,
            1e21 + 0.5, 123.456, 123.456, -123.456};
        for (double v : values) {
            assertEquals(direct(v), viaMemo(memo, v), "value " + v);
        }
    }

    @Test
    void randomValuesMatchJsNumbersWithTheCacheInPlay() {
        NumberMemo memo = new NumberMemo();
        Random r = new Random(7);
        double prev = 0.5;
        for (int i = 0; i < 20_000; i++) {
            double v = r.nextInt(3) == 0 ? prev : Double.longBitsToDouble(r.nextLong());
            assertEquals(direct(v), viaMemo(memo, v), "value " + v);
            prev = v;
        }
    }
}
