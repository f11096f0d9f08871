package org.zrm.bench;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One measured case: ZRM's rate, the limit's rate and the target ratio. {@code unit} names the
 * rate (e.g. {@code rows/s}, {@code MB/s}); {@code details} carries anything else worth recording
 * (row counts, durations, profiles), written to the JSON file only.
 */
public record Result(String name, double zrm, double limit, double target, String unit, Map<String, Object> details) {

    public double ratio() {
        return limit <= 0 ? 0 : zrm / limit;
    }

    public boolean met() {
        return ratio() >= target;
    }

    /** The final line format the issues ask for. */
    public String resultLine() {
        return String.format(Locale.ROOT, "RESULT %s zrm=%.1f limit=%.1f ratio=%.3f target=%s met=%s",
                name, zrm, limit, ratio(), trim(target), met() ? "yes" : "no");
    }

    Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", name);
        json.put("unit", unit);
        json.put("zrm", zrm);
        json.put("limit", limit);
        json.put("ratio", ratio());
        json.put("target", target);
        json.put("met", met());
        json.put("details", details);
        return json;
    }

    private static String trim(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }
}
