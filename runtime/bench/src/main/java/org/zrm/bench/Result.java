package org.zrm.bench;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One measured case: ZRM's rate, the limit's rate and the target ratio. {@code unit} names the
 * rate (e.g. {@code rows/s}, {@code MB/s}); {@code details} carries anything else worth recording
 * (row counts, durations, profiles), written to the JSON file only.
 *
 * <p>A case measured on a peer system instead of ZRM ({@code --peer}, see {@link #peer}) names
 * that peer in {@code peer}; its figure is in {@code zrm} and its line starts with {@code PEER},
 * never {@code RESULT}, so that it cannot be taken for a ZRM figure.
 */
public record Result(String name, double zrm, double limit, double target, String unit, Map<String, Object> details,
        String customLine, boolean customMet, String peer) {

    /** A rate compared with a limit: the usual case. */
    public Result(String name, double zrm, double limit, double target, String unit, Map<String, Object> details) {
        this(name, zrm, limit, target, unit, details, null, false, null);
    }

    /**
     * A case that is not a rate against a limit (latency percentiles): {@code line} is printed as
     * is after {@code RESULT <name> }, and {@code met} says whether its target was met.
     */
    public static Result custom(String name, String line, boolean met, Map<String, Object> details) {
        return new Result(name, 0, 0, 0, "", details, line, met, null);
    }

    /**
     * A peer system's figure against its own limit from the same run, printed as
     * {@code PEER <name> peer=<peer> <figureName>=<figure> <limitName>=<limit> ratio=<r>}. It has
     * no target: it is evidence for reading ZRM's figures, not a check.
     */
    public static Result peer(String name, String peer, String figureName, double figure, String limitName,
            double limit, String unit, Map<String, Object> details) {
        String line = String.format(Locale.ROOT, "%s=%.1f %s=%.1f ratio=%.3f", figureName, figure, limitName, limit,
                limit <= 0 ? 0 : figure / limit);
        return new Result(name, figure, limit, 0, unit, details, line, false, peer);
    }

    public double ratio() {
        return limit <= 0 ? 0 : zrm / limit;
    }

    public boolean met() {
        if (peer != null) {
            return false;
        }
        if (customLine != null) {
            return customMet;
        }
        return ratio() >= target;
    }

    /** The final line format the issues ask for. */
    public String resultLine() {
        if (peer != null) {
            return "PEER " + name + " peer=" + peer + " " + customLine;
        }
        if (customLine != null) {
            return "RESULT " + name + " " + customLine + " met=" + (customMet ? "yes" : "no");
        }
        return String.format(Locale.ROOT, "RESULT %s zrm=%.1f limit=%.1f ratio=%.3f target=%s met=%s",
                name, zrm, limit, ratio(), trim(target), met() ? "yes" : "no");
    }

    Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", name);
        if (peer != null) {
            json.put("peer", peer);
            json.put("line", resultLine());
            json.put("unit", unit);
            json.put("figure", zrm);
            json.put("limit", limit);
            json.put("ratio", ratio());
            json.put("details", details);
            return json;
        }
        if (customLine != null) {
            json.put("line", resultLine());
            json.put("met", met());
            json.put("details", details);
            return json;
        }
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
